/**
 * Watches the requests that leave this process through node:http: the transport of shared/net/safe-fetch.ts, which
 * the upstream client, the webhook deliveries and the media link checks use. Observation only: each request goes out
 * unchanged.
 */
import type { ClientRequest } from 'node:http';

/**
 * Calls `observe` with the URL of every request made with `http.request` until the returned function is called;
 * `observe` may return a function, called once the exchange is over (the request's `close`).
 */
export function observeHttpRequests(observe: (url: string) => (() => void) | void): () => void {
  const http = process.getBuiltinModule('node:http');
  const original = http.request;
  http.request = function (this: unknown, ...args: unknown[]) {
    const [target] = args as [URL | string | { protocol?: string; host?: string; hostname?: string; port?: number; path?: string }];
    const url = target instanceof URL || typeof target === 'string'
      ? String(target)
      : `${target.protocol ?? 'http:'}//${target.host ?? `${target.hostname}:${target.port}`}${target.path ?? '/'}`;
    const done = observe(url);
    const req = (original as (...a: unknown[]) => ClientRequest).apply(this, args);
    if (done) req.once('close', done);
    return req;
  } as typeof http.request;
  return () => {
    http.request = original;
  };
}
