/**
 * Every scope-guarded route, derived from the route table (so a new route cannot forget its scope):
 * a key holding every scope but the route's own gets 403, a key with no scopes gets 403, and no key gets 401 —
 * before any validation or data access. The Cloud-API-compatible routes say the same in Graph error bodies (codes 10 and 190).
 */
import { routes } from '#shared/routes.ts';
import { SCOPES } from '#shared/auth/scopes.ts';
import { invoke, newTenant, type TestTenant } from '../../support/api.ts';
import { inOwnTable, scanTable } from '../../support/table.ts';

const guarded = routes.filter((r) => r.scope !== null);
const sampleParams = (path: string) =>
  Object.fromEntries([...path.matchAll(/\{(\w+)\}/g)].map((m) => [m[1], m[1] === 'version' ? 'v23.0' : '00000000-0000-4000-8000-000000000000']));
const graphStyle = (handler: string) => handler.startsWith('http/cloud-api/');

const tenants = new Map<string, TestTenant>();
let noScopes: TestTenant;

beforeAll(async () => {
  noScopes = await newTenant([]);
  for (const scope of new Set(guarded.map((r) => r.scope!))) {
    tenants.set(scope, await newTenant(SCOPES.filter((s) => s !== scope)));
  }
});

describe.each(guarded.map((r) => [`${r.method} ${r.path}`, r] as const))('%s', (key, route) => {
  it(`needs ${route.scope}`, async () => {
    const params = sampleParams(route.path);
    const body = route.method === 'GET' || route.method === 'DELETE' ? undefined : {};
    const withoutScope = await invoke(key, { apiKey: tenants.get(route.scope!)!.apiKey, params, body });
    expect(withoutScope.status).toBe(403);
    expect(withoutScope.body).toEqual(graphStyle(route.handler)
      ? { error: expect.objectContaining({ code: 10, message: expect.stringContaining(route.scope!) }) }
      : { error: 'forbidden', message: expect.stringContaining(route.scope!) });
    expect((await invoke(key, { apiKey: noScopes.apiKey, params, body })).status).toBe(403);
    const anonymous = await invoke(key, { params, body });
    expect(anonymous.status).toBe(401);
    if (graphStyle(route.handler)) expect(anonymous.body.error.code).toBe(190);
    else expect(anonymous.body.error).toBe('unauthorized');
    // RFC 6750's challenge: no bearer token came (Bearer: none, or another scheme), or the one that came is not a key (invalid_token).
    expect(anonymous.headers['www-authenticate']).toBe('Bearer');
    const otherScheme = await invoke(key, { params, body, headers: { authorization: 'Basic dXNlcjpwYXNz' } });
    expect([otherScheme.status, otherScheme.headers['www-authenticate']]).toEqual([401, 'Bearer']);
    const revokedOrUnknown = await invoke(key, { apiKey: 'wa_live_notAKeyOfAnyoneAtAll0000000000', params, body });
    expect(revokedOrUnknown.status).toBe(401);
    expect(revokedOrUnknown.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
  });
});

// In a table of its own (the shared one holds what every other file seeded): everything creating a business and
// its key writes is in it, and all of it is read.
it('stores API keys only as hashes', () => inOwnTable(async () => {
  const tenant = await newTenant();
  const items = await scanTable();
  expect(items.filter((item) => String(item.pk).startsWith('APIKEY#'))).toHaveLength(1);
  expect(JSON.stringify(items)).not.toContain(tenant.apiKey.slice(4));
}));
