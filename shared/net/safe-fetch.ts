import dns from 'node:dns';
import type { LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { config } from '#shared/config.ts';
import { checkAddress, isIpLiteral } from '#shared/net/address-policy.ts';

/**
 * An HTTP client for URLs chosen by users (media links, webhook targets) that cannot be pointed at the
 * service's own network. The address check runs inside the socket's DNS lookup, i.e. on the very
 * address the connection is opened to, so a DNS answer that changes between a check and the connect
 * (rebinding) cannot slip through. Redirects are followed by hand so that each hop is checked again.
 *
 * Built on node:http and node:https with keep-alive agents (one per scheme and policy, created once per
 * container): nothing to load at cold start, and a pooled connection is reused without a new lookup, its
 * address having been checked when it was opened.
 */

export type SafeFetchErrorCode =
  | 'invalid_url'
  | 'blocked_address'
  | 'too_large'
  | 'timeout'
  | 'too_many_redirects'
  | 'network_error';

export class SafeFetchError extends Error {
  constructor(
    readonly code: SafeFetchErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'SafeFetchError';
  }
}
/** The URL (or a redirect) resolves to a loopback, private, link-local, metadata... address. */
export class BlockedAddressError extends SafeFetchError {
  constructor(message: string) {
    super('blocked_address', message);
    this.name = 'BlockedAddressError';
  }
}
/** The body (announced or streamed) exceeds `maxBytes`; the download stopped there. */
export class ResponseTooLargeError extends SafeFetchError {
  constructor(
    readonly maxBytes: number,
    /** The size the server announced (Content-Length), when it did. */
    readonly announcedBytes?: number,
  ) {
    super('too_large', `response body exceeds ${maxBytes} bytes`);
    this.name = 'ResponseTooLargeError';
  }
}
export class FetchTimeoutError extends SafeFetchError {
  constructor(message: string) {
    super('timeout', message);
    this.name = 'FetchTimeoutError';
  }
}

export interface SafeFetchOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** Stop reading (and fail) once the body exceeds this many bytes. Default 100 MB. */
  maxBytes?: number;
  /** The caller needs the status and headers only: the body is drained unread (in the exchange's time), never refused. */
  discardBody?: boolean;
  /** Budget for connecting and for the whole exchange (each). Default 10 s. */
  timeoutMs?: number;
  /** How many redirects to follow, each re-checked; 0 returns the 3xx response as is. Default 0. */
  followRedirects?: number;
  /** Allow loopback/private targets (local mode). Default `config.allowPrivateNetworkTargets`. */
  allowPrivate?: boolean;
  signal?: AbortSignal;
}

export interface SafeFetchResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /** The URL that answered, after redirects. */
  url: string;
  redirects: number;
}

const DEFAULT_MAX_BYTES = 100 * 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 10_000;

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `net.connect` lookup that resolves, then refuses the connection if any resolved address is not allowed. */
function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    dns.lookup(hostname, { family: options.family ?? 0, hints: options.hints, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      // Refuse when any answer is disallowed: a mixed answer is a rebinding attempt, not a reason to pick.
      for (const a of addresses) {
        const verdict = checkAddress(a.address, allowPrivate);
        if (!verdict.allowed) {
          const blocked = new BlockedAddressError(`${hostname} resolves to a ${verdict.reason}`) as BlockedAddressError &
            NodeJS.ErrnoException;
          return callback(blocked, []);
        }
      }
      if (addresses.length === 0) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), []);
      if (options.all) return callback(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

// One keep-alive agent per (scheme, policy), created once per container; its lookup guards every connection it opens.
const agents = new Map<string, http.Agent>();
function agentFor(url: URL, allowPrivate: boolean): http.Agent {
  const key = `${url.protocol}${allowPrivate}`;
  let agent = agents.get(key);
  if (!agent) {
    const options = { keepAlive: true, lookup: guardedLookup(allowPrivate) as never };
    agent = url.protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
    agents.set(key, agent);
  }
  return agent;
}

/** One request/response exchange, the response's body not yet read. */
function exchange(url: URL, method: string, headers: Record<string, string>, body: string | Uint8Array | undefined, signal: AbortSignal, allowPrivate: boolean): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = (url.protocol === 'https:' ? https : http).request(url, { method, headers, agent: agentFor(url, allowPrivate), signal });
    req.once('response', (res) => {
      // Errors while the body streams reach whoever reads it; one nobody reads must not go unhandled.
      res.on('error', () => undefined);
      resolve(res);
    });
    req.on('error', reject);
    req.end(body);
  });
}

function parseTarget(raw: string, allowPrivate: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new SafeFetchError('invalid_url', `not a valid URL: ${raw}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new SafeFetchError('invalid_url', `only http and https URLs are fetched, not ${url.protocol}`);
  }
  if (url.username || url.password) throw new SafeFetchError('invalid_url', 'URLs with credentials are not fetched');
  // net.connect skips the lookup for IP literals, so those are judged here.
  if (isIpLiteral(url.hostname)) {
    const verdict = checkAddress(url.hostname, allowPrivate);
    if (!verdict.allowed) throw new BlockedAddressError(`${url.hostname} is a ${verdict.reason}`);
  }
  return url;
}

function findBlocked(err: unknown): BlockedAddressError | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof BlockedAddressError) return e;
  }
  return undefined;
}

function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

/** Fetch a user-supplied URL under the SSRF policy, a size cap enforced while streaming, and timeouts. */
export async function safeFetch(target: string, options: SafeFetchOptions = {}): Promise<SafeFetchResponse> {
  const allowPrivate = options.allowPrivate ?? config.allowPrivateNetworkTargets;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxRedirects = options.followRedirects ?? 0;
  const deadline = AbortSignal.timeout(timeoutMs);
  const signal = options.signal ? AbortSignal.any([deadline, options.signal]) : deadline;
  let url = parseTarget(target, allowPrivate);
  let method = (options.method ?? 'GET').toUpperCase();
  let body = options.body;
  let headers = { ...(options.headers ?? {}) };
  if (body !== undefined && !Object.keys(headers).some((k) => k.toLowerCase() === 'content-length')) headers['content-length'] = String(Buffer.byteLength(body));

  for (let hop = 0; ; hop++) {
    let res: http.IncomingMessage;
    try {
      res = await exchange(url, method, headers, body, signal, allowPrivate);
    } catch (err) {
      throw translate(err, deadline, url);
    }
    const status = res.statusCode ?? 0;
    const resHeaders = flattenHeaders(res.headers);
    const location = resHeaders.location;
    if (status >= 300 && status < 400 && location && maxRedirects > 0) {
      res.resume();
      if (hop >= maxRedirects) throw new SafeFetchError('too_many_redirects', `more than ${maxRedirects} redirects`);
      const next = parseTarget(new URL(location, url).toString(), allowPrivate);
      // Credentials never follow a redirect to another origin.
      if (next.origin !== url.origin) {
        headers = Object.fromEntries(
          Object.entries(headers).filter(([k]) => !['authorization', 'cookie'].includes(k.toLowerCase())),
        );
      }
      // 303 (and 301/302 after a POST, as browsers do) turn into a GET without body.
      if (status === 303 || ((status === 301 || status === 302) && method === 'POST')) {
        method = 'GET';
        body = undefined;
        headers = Object.fromEntries(
          Object.entries(headers).filter(([k]) => !['content-type', 'content-length'].includes(k.toLowerCase())),
        );
      }
      url = next;
      continue;
    }

    // A HEAD response announces the length of a body it does not carry.
    if (method === 'HEAD' || options.discardBody) {
      res.resume();
      return { status, headers: resHeaders, body: Buffer.alloc(0), url: url.toString(), redirects: hop };
    }
    const announced = Number(resHeaders['content-length']);
    if (Number.isFinite(announced) && announced > maxBytes) {
      res.destroy();
      throw new ResponseTooLargeError(maxBytes, announced);
    }
    const chunks: Buffer[] = [];
    let received = 0;
    try {
      for await (const chunk of res) {
        received += (chunk as Buffer).length;
        if (received > maxBytes) {
          res.destroy();
          throw new ResponseTooLargeError(maxBytes);
        }
        chunks.push(chunk as Buffer);
      }
    } catch (err) {
      if (err instanceof SafeFetchError) throw err;
      throw translate(err, deadline, url);
    }
    return { status, headers: resHeaders, body: Buffer.concat(chunks, received), url: url.toString(), redirects: hop };
  }
}

function translate(err: unknown, deadline: AbortSignal, url: URL): SafeFetchError {
  const blocked = findBlocked(err);
  if (blocked) return blocked;
  if (err instanceof SafeFetchError) return err;
  const code = (err as { code?: string }).code ?? '';
  if (deadline.aborted || /TIMEOUT/i.test(code) || (err as Error).name === 'TimeoutError') {
    return new FetchTimeoutError(`fetching ${url.host} timed out`);
  }
  return new SafeFetchError('network_error', `fetching ${url.host} failed: ${(err as Error).message}`, { cause: err });
}
