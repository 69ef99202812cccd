/**
 * A deterministic stand-in for a model server, speaking the OpenAI chat-completions protocol at
 * `POST /v1/chat/completions`, so that the local stack shows the whole AI loop without any account.
 *
 * The reply quotes the customer's latest turn and counts the turns it was given, so tests can see that
 * history reached the model. Fault switches in the latest user turn, for retry tests:
 * - `ai-fail-once`: the first request with exactly that text answers 503, later ones succeed;
 * - `ai-fail-always`: every request answers 500.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const AI_COMPLETIONS_PATH = '/v1/chat/completions';

interface ChatMessage {
  role: string;
  content: unknown;
}

const failedOnce = new Set<string>();

/** The text of a message's content: a string, or a list of parts with `text` (chat-completions and Converse alike). */
export const textOf = (content: unknown): string =>
  typeof content === 'string' ? content : Array.isArray(content) ? content.map((p) => (typeof p?.text === 'string' ? p.text : '')).join('') : '';

/** The reply the responder gives to a chat-completions request body: [status, body]. */
export function chatCompletion(body: unknown): [number, unknown] {
  const messages: ChatMessage[] = Array.isArray((body as any)?.messages) ? (body as any).messages : [];
  if (messages.length === 0) return [400, { error: { message: 'messages is required', type: 'invalid_request_error' } }];
  const turns = messages.filter((m) => m.role === 'user' || m.role === 'assistant');
  const lastUser = textOf([...turns].reverse().find((m) => m.role === 'user')?.content).trim();
  if (lastUser.includes('ai-fail-always')) return [500, { error: { message: 'injected failure', type: 'server_error' } }];
  if (lastUser.includes('ai-fail-once') && !failedOnce.has(lastUser)) {
    failedOnce.add(lastUser);
    return [503, { error: { message: 'injected failure (once)', type: 'server_error' } }];
  }
  const content = `[AI] Thanks for your message! You said: "${lastUser}" (${turns.length} turn${turns.length === 1 ? '' : 's'} of history)`;
  const model = typeof (body as any)?.model === 'string' ? (body as any).model : 'sandbox-echo';
  return [200, {
    id: `chatcmpl-sandbox-${Date.now().toString(36)}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
  }];
}

/** Node HTTP handler for the sandbox server: answers POST /v1/chat/completions. */
export async function aiResponder(req: IncomingMessage, res: ServerResponse): Promise<void> {
  let status = 404;
  let body: unknown = { error: { message: `No route ${req.method} ${req.url}`, type: 'invalid_request_error' } };
  if (req.method === 'POST') {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      [status, body] = chatCompletion(parsed);
    } catch {
      [status, body] = [400, { error: { message: 'The body must be JSON', type: 'invalid_request_error' } }];
    }
  }
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** The responder on its own port (tests that run the AI worker without the whole sandbox). */
export async function startAiResponder(port = 0): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path !== AI_COMPLETIONS_PATH) {
      res.writeHead(404, { 'content-type': 'application/json' });
      return void res.end('{"error":{"message":"not found"}}');
    }
    aiResponder(req, res).catch(() => res.end());
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
