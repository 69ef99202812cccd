import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { safeFetch, SafeFetchError, BlockedAddressError, ResponseTooLargeError, FetchTimeoutError } from '#shared/net/safe-fetch.ts';

/** A loopback server whose routes the tests script; reaching it needs `allowPrivate`. */
let server: http.Server;
let base: string;
let port: number;
let bytesSent = 0;
let connections = 0;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    if (url.pathname === '/ok') return void res.end('hello');
    if (url.pathname === '/echo') {
      const parts: Buffer[] = [];
      req.on('data', (c) => parts.push(c));
      req.on('end', () => res.end(JSON.stringify({ method: req.method, body: Buffer.concat(parts).toString(), auth: req.headers.authorization ?? null })));
      return;
    }
    if (url.pathname === '/redirect') {
      res.writeHead(Number(url.searchParams.get('code') ?? 302), { location: url.searchParams.get('to')! });
      return void res.end();
    }
    if (url.pathname === '/stream') {
      // No content-length: the cap must be enforced while streaming.
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(64 * 1024, 1);
      let left = 200;
      const pump = () => {
        while (left > 0) {
          left--;
          bytesSent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
      return;
    }
    if (url.pathname === '/big') {
      res.writeHead(200, { 'content-length': String(50 * 1024 * 1024) });
      return void res.end();
    }
    if (url.pathname === '/slow') return void setTimeout(() => res.end('late'), 2_000).unref();
    res.writeHead(404).end();
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('safeFetch', () => {
  it.each([
    ['loopback literal', () => `http://127.0.0.1:${port}/ok`],
    ['IPv6 loopback literal', () => `http://[::1]:${port}/ok`],
    ['private literal', () => 'http://10.0.0.1/ok'],
    ['metadata literal', () => 'http://169.254.169.254/latest/meta-data/'],
    ['decimal-encoded loopback', () => `http://2130706433:${port}/ok`],
    ['IPv4-mapped loopback', () => `http://[::ffff:127.0.0.1]:${port}/ok`],
  ])('refuses a %s', async (_name, target) => {
    // Act
    const attempt = safeFetch(target(), { allowPrivate: false });
    // Assess
    await expect(attempt).rejects.toBeInstanceOf(BlockedAddressError);
  });

  it('refuses a host name that resolves to loopback, checked at connect time', async () => {
    // Act: "localhost" is not a literal, so only the connect-time lookup can catch it.
    const attempt = safeFetch(`http://localhost:${port}/ok`, { allowPrivate: false });
    // Assess
    await expect(attempt).rejects.toMatchObject({ code: 'blocked_address' });
  });

  it('refuses an https host name that resolves to loopback, before any TLS', async () => {
    // Act: no TLS server listens there; the lookup refuses before a handshake could fail.
    const attempt = safeFetch(`https://localhost:${port}/ok`, { allowPrivate: false });
    // Assess
    await expect(attempt).rejects.toMatchObject({ code: 'blocked_address' });
  });

  it('sends the exact bytes of a body with their length, over one pooled connection', async () => {
    // Prepare: a body whose UTF-8 length differs from its length in characters.
    const body = JSON.stringify({ name: 'Zoë 🚀', n: 1 });
    const before = connections;
    // Act: three requests in turn to the same origin.
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await safeFetch(`${base}/echo`, { method: 'POST', body, headers: { 'content-type': 'application/json' }, allowPrivate: true }));
    // Assess
    for (const res of answers) expect(JSON.parse(res.body.toString())).toMatchObject({ method: 'POST', body });
    expect(connections - before).toBe(1);
  });

  it('fetches a private target when private targets are allowed', async () => {
    // Act
    const res = await safeFetch(`http://localhost:${port}/ok`, { allowPrivate: true });
    // Assess
    expect(res.status).toBe(200);
    expect(res.body.toString()).toBe('hello');
  });

  it('re-checks every redirect hop', async () => {
    // Prepare: an allowed first hop that redirects to the metadata address (refused in every mode).
    const target = `${base}/redirect?to=${encodeURIComponent('http://169.254.169.254/latest/meta-data/')}`;
    // Act / Assess
    await expect(safeFetch(target, { allowPrivate: true, followRedirects: 3 })).rejects.toBeInstanceOf(BlockedAddressError);
  });

  it('follows allowed redirects up to the limit and no further', async () => {
    // Prepare
    const once = `${base}/redirect?to=${encodeURIComponent('/ok')}`;
    const twice = `${base}/redirect?to=${encodeURIComponent(once)}`;
    // Act
    const followed = await safeFetch(twice, { allowPrivate: true, followRedirects: 2 });
    const notFollowed = await safeFetch(once, { allowPrivate: true, followRedirects: 0 });
    // Assess
    expect(followed).toMatchObject({ status: 200, redirects: 2, url: `${base}/ok` });
    expect(notFollowed.status).toBe(302);
    await expect(safeFetch(twice, { allowPrivate: true, followRedirects: 1 })).rejects.toMatchObject({ code: 'too_many_redirects' });
  });

  it('drops credentials on a cross-origin redirect and turns a 303 into a GET', async () => {
    // Prepare: localhost and 127.0.0.1 are different origins.
    const target = `${base}/redirect?code=303&to=${encodeURIComponent(`http://localhost:${port}/echo`)}`;
    // Act
    const res = await safeFetch(target, { method: 'POST', body: 'x', headers: { authorization: 'Bearer secret' }, allowPrivate: true, followRedirects: 1 });
    // Assess
    expect(JSON.parse(res.body.toString())).toEqual({ method: 'GET', body: '', auth: null });
  });

  it('enforces the size cap while streaming, without reading the whole body', async () => {
    // Prepare
    bytesSent = 0;
    // Act
    const attempt = safeFetch(`${base}/stream`, { allowPrivate: true, maxBytes: 1024 * 1024 });
    // Assess
    await expect(attempt).rejects.toBeInstanceOf(ResponseTooLargeError);
    expect(bytesSent).toBeLessThan(200 * 64 * 1024);
  });

  it('refuses an announced oversize body before reading it', async () => {
    await expect(safeFetch(`${base}/big`, { allowPrivate: true, maxBytes: 1024 })).rejects.toMatchObject({ code: 'too_large' });
  });

  it('times out on a slow server', async () => {
    // Act
    const started = Date.now();
    const attempt = safeFetch(`${base}/slow`, { allowPrivate: true, timeoutMs: 300 });
    // Assess
    await expect(attempt).rejects.toBeInstanceOf(FetchTimeoutError);
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it('refuses non-http schemes and malformed URLs', async () => {
    await expect(safeFetch('file:///etc/passwd')).rejects.toMatchObject({ code: 'invalid_url' });
    await expect(safeFetch('not a url')).rejects.toBeInstanceOf(SafeFetchError);
  });
});
