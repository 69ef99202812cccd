/**
 * HTTP helpers of the tests that talk to local servers: calling the local stack with an API key, a free
 * port, a webhook receiver, a loopback file server for media links, and the customer's first message
 * through the sandbox. Only node modules are imported here, so any test (and globalSetup) can load it
 * before the service modules read shared/config.ts.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LocalStack } from '#infra/local/stack.ts';

export interface Reply {
  status: number;
  body: any;
  headers: Headers;
}

/** The status, headers and body of a response: JSON parsed, any other text kept as it is. */
export const parseReply = async (res: Response): Promise<Reply> => {
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON */
  }
  return { status: res.status, body, headers: res.headers };
};

export type Call = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<Reply>;

/**
 * Calls `baseUrl` (the local stack) with `apiKey` as the bearer token. A body is sent as JSON (a string as it is)
 * with `content-type: application/json`; `headers` are added last.
 */
export const callWith = (baseUrl: string, apiKey: string): Call => async (method, path, body, headers = {}) =>
  parseReply(await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  }));

/** Calls the upstream sandbox's control endpoints (`/__sandbox/...`) at `sandboxUrl`, without a key. */
export const callSandbox = (sandboxUrl: string) => async (method: string, path: string, body?: unknown): Promise<Reply> =>
  parseReply(await fetch(`${sandboxUrl}${path}`, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) }));

/**
 * The customer writes to the stack's demo number through the sandbox (which opens the 24-hour window free-form
 * messages need), and the queues are let run until idle.
 */
export async function customerWrites(stack: LocalStack, from: string): Promise<void> {
  await fetch(`${stack.sandboxUrl}/__sandbox/inbound`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ from, text: 'hola' }) });
  await stack.queues.idle();
}


/**
 * A webhook receiver at `{url}` (path /hook) that records what it gets and can answer 5xx for a while ("down").
 * With `events`, every body that parses as JSON is also pushed there (the service's `{ event, data }` payloads).
 */
export async function startReceiver(options: { events?: unknown[] } = {}) {
  const received: { url: string; headers: IncomingHttpHeaders; body: string; at: number }[] = [];
  let down = false;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      if (down) return void res.writeHead(503).end('down');
      const body = Buffer.concat(chunks).toString('utf8');
      received.push({ url: req.url ?? '', headers: req.headers, body, at: Date.now() });
      if (options.events) {
        try {
          options.events.push(JSON.parse(body));
        } catch {
          /* not ours */
        }
      }
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    setDown: (value: boolean) => {
      down = value;
    },
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/**
 * A loopback file server for media links: `served` maps a path to its bytes (404 otherwise), answered with
 * content-length and no content-type, HEAD without the body. Paths under `getOnlyPrefix` serve the same
 * files with the prefix removed, but answer HEAD with 405 (like many simple servers).
 */
export async function startFileServer(served: Record<string, Buffer>, options: { getOnlyPrefix?: string } = {}) {
  const { getOnlyPrefix } = options;
  const server = createServer((req, res) => {
    const path = new URL(req.url!, 'http://x').pathname;
    const getOnly = getOnlyPrefix !== undefined && path.startsWith(getOnlyPrefix);
    const body = served[getOnly ? path.slice(getOnlyPrefix.length) : path];
    if (!body) return void res.writeHead(404).end();
    if (req.method === 'HEAD' && getOnly) return void res.writeHead(405).end();
    res.writeHead(200, { 'content-length': String(body.length) });
    res.end(req.method === 'HEAD' ? undefined : body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
