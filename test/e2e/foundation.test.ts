/**
 * The foundation through the local stack over HTTP, as a new user meets it: a demo key, the admin CLI,
 * auth, scopes, rate limits, unknown routes, and the OpenAPI document.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startTestStack, type LocalStack } from '../support/stack.ts';
import { routes } from '#shared/routes.ts';

const run = promisify(execFile);
let stack: LocalStack;

const admin = async (...args: string[]) => {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'infra/local/admin.ts', ...args], {
    env: { ...process.env, DYNAMODB_ENDPOINT: stack.dynamodbEndpoint, TABLE_NAME: stack.tableName, NODE_OPTIONS: '' },
  });
  return JSON.parse(stdout);
};

beforeAll(async () => {
  stack = await startTestStack({ demo: true });
}, 60_000);
afterAll(() => stack?.stop());

const get = (path: string, key?: string) => fetch(`${stack.url}${path}`, { headers: key ? { authorization: `Bearer ${key}` } : {} });

describe('local stack', () => {
  it('answers GET /team/v1 with the demo key, 401 without it', async () => {
    const ok = await get('/team/v1', stack.demo!.apiKey);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ agents: [] });
    const no = await get('/team/v1');
    expect(no.status).toBe(401);
    expect(await no.json()).toEqual({ error: 'unauthorized', message: expect.any(String) });
  });

  it('admin CLI: business, scoped key (403 without team:read), agent, revocation', async () => {
    const business = await admin('create-business', '--name', 'Acme');
    expect(business).toEqual({ businessId: expect.any(String), phoneNumberId: expect.stringMatching(/^\d+$/) });
    const narrow = await admin('create-key', '--business', business.businessId, '--scopes', 'contacts:read');
    expect(narrow.apiKey).toMatch(/^wak_[0-9A-Za-z]{40}$/);
    expect(narrow.scopes).toEqual(['contacts:read']);
    const forbidden = await get('/team/v1', narrow.apiKey);
    expect(forbidden.status).toBe(403);
    expect(((await forbidden.json()) as any).error).toBe('forbidden');

    const unnamed = await run(process.execPath, ['--import', 'tsx', 'infra/local/admin.ts', 'create-key', '--business', business.businessId], {
      env: { ...process.env, DYNAMODB_ENDPOINT: stack.dynamodbEndpoint, TABLE_NAME: stack.tableName, NODE_OPTIONS: '' },
    }).then(() => 'created', (err: { stdout?: string }) => JSON.parse(err.stdout ?? '{}'));
    // decisions.md: `create-key --business ID [--scopes a,b | --scopes all]`; without --scopes, every scope.
    expect(unnamed).toBe('created');
    const full = await admin('create-key', '--business', business.businessId);
    expect(full.scopes).toEqual(expect.arrayContaining(['messages:write', 'contacts:read', 'team:read', 'agent:write']));
    const help = await admin('--help');
    expect(Object.keys(help.commands)).toEqual(['create-business', 'create-key', 'revoke-key', 'add-agent', 'set-messaging', 'move-number', 'rekey-contacts']);
    expect((await admin('create-key', '--help')).commands).toEqual({ 'create-key': expect.stringContaining('--scopes') });
    const agent = await admin('add-agent', '--business', business.businessId, '--email', 'eve@acme.test', '--name', 'Eve', '--role', 'admin', '--available', 'false');
    const team: any = await (await get("/team/v1", full.apiKey)).json();
    expect(team.agents).toEqual([{ id: agent.agentId, name: 'Eve', email: 'eve@acme.test', role: 'admin', is_available: false, assigned_conversations: 0 }]);

    await admin('revoke-key', '--key-id', full.keyId);
    expect((await get('/team/v1', full.apiKey)).status).toBe(401);
  });

  it('answers the 101st request within a minute with 429 and the limit headers', async () => {
    const business = await admin('create-business', '--name', 'Busy');
    const { apiKey } = await admin('create-key', '--business', business.businessId, '--scopes', 'team:read');
    // Stay inside one fixed window: start right after a minute boundary if we are close to the next one.
    const msIntoMinute = Date.now() % 60_000;
    if (msIntoMinute > 45_000) await new Promise((r) => setTimeout(r, 60_000 - msIntoMinute + 50));
    const statuses: number[] = [];
    for (let i = 0; i < 100; i++) statuses.push((await get('/team/v1', apiKey)).status);
    expect(statuses.every((s) => s === 200)).toBe(true);
    const limited = await get('/team/v1', apiKey);
    expect(limited.status).toBe(429);
    expect(await limited.json()).toEqual({ error: 'rate_limited', message: expect.any(String), retry_after: expect.any(Number) });
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(limited.headers.get('x-ratelimit-limit')).toBe('100');
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(Number(limited.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000);
  }, 60_000);

  it('answers unknown routes 404 and known paths with another method 405', async () => {
    const missing = await get('/nope/v1');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: 'not_found', message: expect.any(String) });
    const wrong = await fetch(`${stack.url}/team/v1`, { method: 'DELETE' });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET');
  });

  it('matches the path as sent: an encoded dot segment is a parameter, never a step up to another route', async () => {
    // Prepare: a contact (fetch would resolve the dot segments itself, so these go out through node:http as written).
    const { request } = await import('node:http');
    const key = stack.demo!.apiKey;
    const created = await fetch(`${stack.url}/contacts/v1`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ phone_number: '+5215512340001', name: 'Ana' }),
    });
    const { contact } = (await created.json()) as { contact: { id: string } };
    // The options' path is sent verbatim (the URL string above would be normalised first).
    const verbatim = (method: string, path: string) => new Promise<number>((resolve, reject) => {
      const { hostname, port } = new URL(stack.url);
      const req = request({ hostname, port, method, path, headers: { authorization: `Bearer ${key}` } }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on('error', reject);
      req.end();
    });

    // Act
    const statuses = [
      await verbatim('DELETE', `/contacts/v1/${contact.id}/anything/%2E%2E`),
      await verbatim('DELETE', `/contacts/v1/${contact.id}/%2e%2e/..`),
      await verbatim('PATCH', `/contacts/v1/${contact.id}/%2e`),
    ];
    const after = await get(`/contacts/v1/${contact.id}`, key);

    // Assess
    expect(statuses).toEqual([404, 404, 404]);
    expect(after.status).toBe(200);
  });

  it('answers a request line over 16 KB with a JSON 431', async () => {
    const res = await get(`/conversations/v1?cursor=${'A'.repeat(100_000)}`, stack.demo!.apiKey);
    expect(res.status).toBe(431);
    expect(await res.json()).toEqual({ error: 'request_too_large', message: expect.any(String) });
  });

  it('speaks HTTP at the edges: a pipelined bad request after a good one, OPTIONS *, a repeated Authorization, a body that is not UTF-8', async () => {
    // Prepare
    const { connect } = await import('node:net');
    const { hostname, port } = new URL(stack.url);
    const key = stack.demo!.apiKey;
    /** Writes raw bytes on one connection and answers everything the server sends back until it closes. */
    const raw = (bytes: Buffer | string) => new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => socket.write(bytes));
      let out = '';
      socket.on('data', (c) => (out += c.toString('latin1')));
      socket.on('end', () => resolve(out));
      socket.on('error', reject);
    });
    const contact = JSON.stringify({ phone_number: '+5215512340077', name: 'Pipelined' });

    // Act
    const pipelined = await raw(`POST /contacts/v1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(contact)}\r\n\r\n${contact}GARBAGE / HTTP/1.1\r\n\r\n`);
    const star = await raw('OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    const twoKeys = await raw(`GET /team/v1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nAuthorization: Bearer wak_${'x'.repeat(40)}\r\nConnection: close\r\n\r\n`);
    const latin1 = Buffer.concat([Buffer.from('{"phone_number":"+5215512340078","name":"Jos'), Buffer.from([0xe9]), Buffer.from('"}')]);
    const notUtf8 = await raw(Buffer.concat([Buffer.from(`POST /contacts/v1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json; charset=iso-8859-1\r\nContent-Length: ${latin1.length}\r\nConnection: close\r\n\r\n`), latin1]));
    const bom = await fetch(`${stack.url}/contacts/v1`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: `\uFEFF${JSON.stringify({ phone_number: '+5215512340079' })}` });

    // Assess
    expect({
      pipelined: pipelined.match(/^HTTP\/1\.1 \d+/gm),
      star: star.match(/^HTTP\/1\.1 \d+/)?.[0],
      twoKeys: twoKeys.match(/^HTTP\/1\.1 \d+/)?.[0],
      notUtf8: /^HTTP\/1\.1 400 [\s\S]*"invalid_json"[\s\S]*not UTF-8/.test(notUtf8),
      bom: bom.status,
    }).toEqual({ pipelined: ['HTTP/1.1 201', 'HTTP/1.1 400'], star: 'HTTP/1.1 404', twoKeys: 'HTTP/1.1 401', notUtf8: true, bom: 201 });
  });

  it('serves an OpenAPI 3.1 document listing every route of the route table', async () => {
    const res = await get('/openapi.json');
    expect(res.status).toBe(200);
    const doc: any = await res.json();
    expect(doc.openapi).toBe('3.1.0');
    for (const route of routes) {
      expect(doc.paths[route.path]?.[route.method.toLowerCase()]).toBeDefined();
      if (route.scope) expect(doc.paths[route.path][route.method.toLowerCase()].security).toEqual([{ apiKey: [route.scope] }]);
    }
  });

  it('serves the reference page at /docs', async () => {
    const res = await get('/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    const html = await res.text();
    expect(html).toContain('/team/v1');
    expect(html).toContain('message.received');
  });
});
