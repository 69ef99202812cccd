/**
 * The local API: a Node HTTP server that turns each request into an API Gateway HTTP API (payload 2.0)
 * event and calls the very handler module Lambda would run, as listed in shared/routes.ts.
 * Unknown paths answer 404, known paths with another method 405, bodies over Lambda's 6 MB payload 413.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { isUtf8 } from 'node:buffer';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { routes, type Route } from '#shared/routes.ts';
import { noRouteReply, routeMatcher } from '#shared/http/route-match.ts';
import { GRAPH_PATH, graphErrorBody } from '#shared/cloud-api/graph-error.ts';
import { routeContext } from './lambda/context.ts';

export const MAX_PAYLOAD_BYTES = 6 * 1024 * 1024;
/**
 * The multipart uploads (the service's and the Cloud API's) are the one place the local stack is more generous than
 * Lambda's 6 MB payload: locally a file up to its type's maximum (documents: 100 MB) reaches the handler, which
 * answers with the contract's per-type checks. In AWS larger files take the presigned path (POST /media/v1/uploads).
 */
export const MAX_LOCAL_UPLOAD_BYTES = 101 * 1024 * 1024;
const UPLOAD_HANDLERS = new Set(['http/media/upload', 'http/cloud-api/media-upload']);

type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

export interface Match {
  route: Route;
  params: Record<string, string>;
}

/** The route a request takes, or the methods its path allows (the rule the deployed `$default` function shares). */
export const matchRoute = routeMatcher(routes);

const handlerCache = new Map<string, Promise<Handler>>();
export const loadHandler = (module: string): Promise<Handler> => {
  let h = handlerCache.get(module);
  if (!h) {
    h = import(`../../functions/${module}.ts`).then((m) => m.handler as Handler);
    handlerCache.set(module, h);
  }
  return h;
};

/**
 * The request's path as the client sent it. WHATWG URL parsing would resolve `%2E%2E` and `.` segments, so that
 * `DELETE /segments/{id}/contacts/%2E%2E` reached `DELETE /segments/{id}`; API Gateway matches the path as sent.
 */
export const requestPath = (req: IncomingMessage): string => {
  const target = req.url ?? '/';
  if (target.startsWith('/')) return target.split(/[?#]/)[0];
  // The absolute form (`http://host/path`); anything else (`OPTIONS *`) names no route.
  return URL.canParse(target) ? new URL(target).pathname : target;
};

const isTextual = (contentType: string) =>
  contentType === '' || /json|^text\/|x-www-form-urlencoded|xml/.test(contentType);

export function toEvent(req: IncomingMessage, body: Buffer, match: Match): APIGatewayProxyEventV2 {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const path = requestPath(req);
  // Every value of a repeated header, joined with commas as API Gateway joins them (Node keeps only the first of some,
  // such as Authorization: a second, different key went unseen).
  const headers: Record<string, string> = {};
  for (const [k, values] of Object.entries(req.headersDistinct)) {
    if (values !== undefined) headers[k.toLowerCase()] = values.join(',');
  }
  const query: Record<string, string> = {};
  for (const [k, val] of url.searchParams) query[k] = k in query ? `${query[k]},${val}` : val;
  const contentType = (headers['content-type'] ?? '').toLowerCase();
  // A textual body that is not UTF-8 reaches the handler as its bytes (base64), never decoded with replacement
  // characters: a signature over it still verifies, and a JSON route can tell it is not UTF-8.
  const textual = isTextual(contentType) && isUtf8(body);
  const now = new Date();
  const routeKey = `${match.route.method} ${match.route.path}`;
  return {
    version: '2.0',
    routeKey,
    rawPath: path,
    rawQueryString: url.search.slice(1),
    headers,
    queryStringParameters: Object.keys(query).length ? query : undefined,
    pathParameters: Object.keys(match.params).length ? match.params : undefined,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: 'local',
      http: { method: req.method ?? 'GET', path, protocol: 'HTTP/1.1', sourceIp: req.socket.remoteAddress ?? '127.0.0.1', userAgent: headers['user-agent'] ?? '' },
      requestId: randomUUID(),
      routeKey,
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    body: body.length ? (textual ? body.toString('utf8') : body.toString('base64')) : undefined,
    isBase64Encoded: body.length > 0 && !textual,
  };
}

const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
};

/**
 * Past this many bytes of a body already refused, the connection is dropped instead of read to its end (the 413 is
 * answered only once the client has sent its whole body: answered sooner, a client still sending gets a reset).
 */
const MAX_DISCARDED_BYTES = 4 * MAX_LOCAL_UPLOAD_BYTES;

/** The body, or undefined when it is over `max` (read to its end all the same, and dropped). */
async function readBody(req: IncomingMessage, max: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > MAX_DISCARDED_BYTES) return undefined;
    if (size <= max) chunks.push(chunk as Buffer);
  }
  return size > max ? undefined : Buffer.concat(chunks);
}

/** Runs a handler module with an event: in this process by default; deployed mode runs each in a process of its own. */
export type Invoke = (module: string, event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

export const inProcess: Invoke = async (module, event, ctx) => (await loadHandler(module))(event, ctx);

/**
 * `invoke`, with the upstream webhooks a client posts to the service itself (any payload the Cloud API sends,
 * decisions.md) made known to the sandbox too once accepted, as Meta knows every message to its numbers: a customer's
 * message opens their window there. `sandbox` is read at each request (it may start after the server).
 */
export const withUpstreamWebhooksObserved = (invoke: Invoke, sandbox: () => { observe(notification: unknown): void } | undefined): Invoke =>
  async (module, event, context) => {
    const out = await invoke(module, event, context);
    if (module === 'http/upstream/receive' && out.statusCode === 200 && event.body) {
      try {
        sandbox()?.observe(JSON.parse(event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body));
      } catch {
        // Not JSON: nothing the sandbox could learn from.
      }
    }
    return out;
  };

export async function handle(req: IncomingMessage, res: ServerResponse, invoke: Invoke = inProcess): Promise<void> {
  const path = requestPath(req);
  const match = matchRoute(req.method ?? 'GET', path);
  if (!match || 'allowed' in match) {
    req.resume();
    const reply = noRouteReply(req.method ?? 'GET', path, match?.allowed);
    res.writeHead(reply.statusCode, reply.headers);
    return void res.end(reply.body);
  }
  const max = UPLOAD_HANDLERS.has(match.route.handler) ? MAX_LOCAL_UPLOAD_BYTES : MAX_PAYLOAD_BYTES;
  const body = await readBody(req, max);
  if (body === undefined) {
    const message = `Request bodies are limited to ${max} bytes; upload large media with POST /media/v1/uploads`;
    // The Cloud API's paths answer every error in the Graph API's shape.
    if (GRAPH_PATH.test(path)) return send(res, 413, graphErrorBody(100, 'OAuthException', message, message, randomUUID()));
    return send(res, 413, { error: 'payload_too_large', message });
  }
  const out = await invoke(match.route.handler, toEvent(req, body, match), routeContext(match.route));
  const headers: Record<string, string> = {};
  for (const [k, val] of Object.entries(out.headers ?? {})) headers[k] = String(val);
  res.writeHead(out.statusCode ?? 200, headers);
  res.end(out.body ? (out.isBase64Encoded ? Buffer.from(out.body, 'base64') : out.body) : undefined);
}

export async function startApiServer(port: number, host = '127.0.0.1', invoke?: Invoke): Promise<{ server: Server; url: string; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    handle(req, res, invoke).catch((err) => {
      console.error('local server error', err);
      if (!res.headersSent) send(res, 500, { error: 'internal_error', message: 'An unexpected error occurred' });
      else res.end();
    });
  });
  server.keepAliveTimeout = 5000;
  // A request Node cannot parse (e.g. a request line or headers over its 16 KB) gets a JSON error, not a bare reset.
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return void socket.destroy();
    const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
    const body = JSON.stringify(tooLarge
      ? { error: 'request_too_large', message: 'The request line and headers are limited to 16 KB' }
      : { error: 'bad_request', message: 'The request is not valid HTTP' });
    const reply = () => socket.end(`HTTP/1.1 ${tooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request'}\r\ncontent-type: application/json; charset=utf-8\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
    // A request pipelined after one still being answered: that answer goes first (its write may have happened).
    const inFlight = (socket as unknown as { _httpMessage?: ServerResponse })._httpMessage;
    if (inFlight && !inFlight.writableFinished) inFlight.once('finish', reply);
    else reply();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const { port: actual } = server.address() as AddressInfo;
  return {
    server,
    url: `http://${host}:${actual}`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
