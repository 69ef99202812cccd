/**
 * The local stand-in for Amazon Bedrock's runtime, for functions run from their packages (deployed mode): the
 * Converse API (`POST /model/{modelId}/converse`), found by the AI provider's @aws-sdk/client-bedrock-runtime
 * through `AWS_ENDPOINT_URL_BEDROCK_RUNTIME` as it would find Bedrock. The answers are the sandbox model's
 * (sandbox/ai-responder.ts: the reply quotes the latest user turn; its fault switches work here too), translated
 * from chat-completions to Converse. HTTP/2 cleartext: the Bedrock runtime client speaks HTTP/2.
 */
import { createServer, type Http2ServerRequest, type Http2ServerResponse, type ServerHttp2Session } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { chatCompletion, textOf } from '../sandbox/ai-responder.ts';

export interface BedrockRuntimeStandIn {
  endpoint: string;
  /** The model ids of the Converse requests received, in order. */
  readonly models: string[];
  close(): Promise<void>;
}

const CONVERSE = /^\/model\/([^/]+)\/converse$/;

/** A Converse request as the chat-completions request the sandbox model answers. */
function asChat(model: string, body: any) {
  const system = Array.isArray(body?.system) ? [{ role: 'system', content: textOf(body.system) }] : [];
  const turns = Array.isArray(body?.messages) ? body.messages.map((m: any) => ({ role: m?.role, content: textOf(m?.content) })) : [];
  return { model, messages: [...system, ...turns] };
}

async function handle(req: Http2ServerRequest, res: Http2ServerResponse, models: string[]): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const reply = (status: number, body: unknown, errorType?: string) => {
    res.writeHead(status, { 'content-type': 'application/json', ...(errorType ? { 'x-amzn-errortype': errorType } : {}) });
    res.end(JSON.stringify(body));
  };
  const model = CONVERSE.exec(new URL(req.url, 'http://x').pathname)?.[1];
  if (req.method !== 'POST' || !model) return reply(404, { message: `No route ${req.method} ${req.url}` }, 'UnknownOperationException');
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return reply(400, { message: 'The body must be JSON' }, 'ValidationException');
  }
  models.push(decodeURIComponent(model));
  const [status, answer] = chatCompletion(asChat(decodeURIComponent(model), body)) as [number, any];
  if (status !== 200) return reply(status, { message: answer?.error?.message ?? 'model failure' }, status === 400 ? 'ValidationException' : 'InternalServerException');
  reply(200, {
    output: { message: { role: 'assistant', content: [{ text: answer.choices[0].message.content }] } },
    stopReason: 'end_turn',
    usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
    metrics: { latencyMs: 0 },
  });
}

export async function startBedrockRuntime(port = 0): Promise<BedrockRuntimeStandIn> {
  const models: string[] = [];
  const server = createServer((req, res) => void handle(req, res, models).catch(() => res.end()));
  const sessions = new Set<ServerHttp2Session>();
  server.on('session', (s) => {
    sessions.add(s);
    s.on('close', () => sessions.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    models,
    close: () => new Promise<void>((resolve) => {
      for (const s of sessions) s.destroy();
      server.close(() => resolve());
    }),
  };
}
