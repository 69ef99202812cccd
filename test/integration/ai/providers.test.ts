/** Both providers against local HTTP servers speaking their protocols. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createH2Server, type Http2Server, type Http2ServerRequest, type Http2ServerResponse, type ServerHttp2Session } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { OpenAiCompatibleProvider } from '#shared/ai/providers/openai-compatible.ts';
import { BedrockProvider } from '#shared/ai/providers/bedrock.ts';
import { ProviderError } from '#shared/ai/providers/provider.ts';
import { chatCompletion, startAiResponder } from '#infra/local/sandbox/ai-responder.ts';

type Reply = (req: IncomingMessage, body: any, res: ServerResponse) => void;

async function fakeServer(reply: Reply): Promise<{ url: string; requests: { path: string; headers: IncomingMessage['headers']; body: any }[]; server: Server }> {
  const requests: { path: string; headers: IncomingMessage['headers']; body: any }[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
    requests.push({ path: req.url ?? '', headers: req.headers, body });
    reply(req, body, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, server };
}
const close = (s: Server) => new Promise<void>((r) => { s.closeAllConnections(); s.close(() => r()); });
const json = (res: ServerResponse, status: number, body: unknown) => { res.writeHead(status, { 'content-type': 'application/json' }); res.end(JSON.stringify(body)); };

const request = { system: 'Be brief.', model: 'm-1', turns: [{ role: 'user' as const, content: 'hello' }] };

describe('OpenAI-compatible provider', () => {
  it('posts the system prompt, the turns, the model and the key, and returns the answer', async () => {
    // Prepare
    const fake = await fakeServer((_req, _body, res) => json(res, 200, { choices: [{ message: { role: 'assistant', content: '  Hi there!  ' } }] }));
    const provider = new OpenAiCompatibleProvider({ baseUrl: `${fake.url}/v1`, apiKey: 'sk-test', timeoutMs: 2000, maxTokens: 64 });

    // Act
    const text = await provider.complete(request);

    // Assess
    expect(text).toBe('Hi there!');
    expect(fake.requests[0].path).toBe('/v1/chat/completions');
    expect(fake.requests[0].headers.authorization).toBe('Bearer sk-test');
    expect(fake.requests[0].body).toEqual({ model: 'm-1', max_tokens: 64, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hello' }] });
    await close(fake.server);
  });

  it.each([
    ['an HTTP error', (res: ServerResponse) => json(res, 429, { error: { message: 'slow down' } })],
    ['no text', (res: ServerResponse) => json(res, 200, { choices: [{ message: { content: '' } }] })],
    ['a body that is not JSON', (res: ServerResponse) => { res.writeHead(200); res.end('<html>'); }],
    ['no answer within the time-out', (_res: ServerResponse) => undefined],
  ])('throws a ProviderError on %s', async (_label, respond) => {
    const fake = await fakeServer((_req, _body, res) => respond(res));
    const provider = new OpenAiCompatibleProvider({ baseUrl: fake.url, timeoutMs: 300, maxTokens: 64 });
    await expect(provider.complete(request)).rejects.toBeInstanceOf(ProviderError);
    await close(fake.server);
  });

  it('throws a ProviderError when nothing listens', async () => {
    const provider = new OpenAiCompatibleProvider({ baseUrl: 'http://127.0.0.1:9', timeoutMs: 1000, maxTokens: 64 });
    await expect(provider.complete(request)).rejects.toBeInstanceOf(ProviderError);
  });
});

/** The Bedrock runtime client speaks HTTP/2 (cleartext to a local endpoint). */
async function fakeBedrock(status: number, headers: Record<string, string>, body: unknown) {
  const requests: { path: string; body: any }[] = [];
  const server: Http2Server = createH2Server(async (req: Http2ServerRequest, res: Http2ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    requests.push({ path: req.url, body: chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined });
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  });
  const sessions = new Set<ServerHttp2Session>();
  server.on('session', (s) => sessions.add(s));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise<void>((r) => { for (const s of sessions) s.destroy(); server.close(() => r()); }),
  };
}

describe('Bedrock Converse provider', () => {
  it('sends a Converse request and joins the text of the answer', async () => {
    // Prepare
    const fake = await fakeBedrock(200, {}, {
      output: { message: { role: 'assistant', content: [{ text: 'Hola, ' }, { text: 'claro.' }] } },
      stopReason: 'end_turn',
      usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 },
      metrics: { latencyMs: 1 },
    });
    const provider = new BedrockProvider({ region: 'us-east-1', timeoutMs: 2000, maxTokens: 64, endpoint: fake.url });

    // Act
    const text = await provider.complete({ ...request, model: 'amazon.nova-lite-v1:0' });
    provider.close();
    await fake.close();

    // Assess
    expect(text).toBe('Hola, claro.');
    expect(decodeURIComponent(fake.requests[0].path)).toBe('/model/amazon.nova-lite-v1:0/converse');
    expect(fake.requests[0].body).toMatchObject({
      system: [{ text: 'Be brief.' }],
      messages: [{ role: 'user', content: [{ text: 'hello' }] }],
      inferenceConfig: { maxTokens: 64 },
    });
  });

  it('throws a ProviderError when Bedrock refuses', async () => {
    const fake = await fakeBedrock(400, { 'x-amzn-errortype': 'ValidationException' }, { message: 'bad model' });
    const provider = new BedrockProvider({ region: 'us-east-1', timeoutMs: 2000, maxTokens: 64, endpoint: fake.url });
    const err = await provider.complete(request).catch((e) => e);
    provider.close();
    await fake.close();
    expect(err).toBeInstanceOf(ProviderError);
    expect(err.message).toContain('bad model');
    expect(fake.requests).toHaveLength(1);
  });
});

describe('sandbox AI responder', () => {
  it('answers deterministically, quoting the latest customer turn', async () => {
    const body = { model: 'x', messages: [{ role: 'system', content: 's' }, { role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }, { role: 'user', content: 'c' }] };
    const [status, first] = chatCompletion(body) as [number, any];
    const [, second] = chatCompletion(body) as [number, any];
    expect(status).toBe(200);
    expect(first.choices[0].message.content).toBe('[AI] Thanks for your message! You said: "c" (3 turns of history)');
    expect(second.choices[0].message.content).toBe(first.choices[0].message.content);
  });

  it('serves the OpenAI path over HTTP and refuses a body without messages', async () => {
    const responder = await startAiResponder();
    const ok = await fetch(`${responder.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }) });
    const bad = await fetch(`${responder.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify({}) });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as any).choices[0].message.content).toContain('"hi"');
    expect(bad.status).toBe(400);
    await responder.close();
  });
});
