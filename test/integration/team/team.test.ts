import { invoke, newTenant } from '../../support/api.ts';
import { addAgent } from '#shared/team/repository.ts';
import { revokeApiKey } from '#shared/auth/api-keys.ts';

describe('GET /team/v1', () => {
  it('lists every agent of the business with every field of the Team agent resource', async () => {
    // Prepare
    const tenant = await newTenant(['team:read']);
    const other = await newTenant();
    const ana = await addAgent(tenant.businessId, { email: 'ana@example.com', name: 'Ana', role: 'admin' });
    await addAgent(tenant.businessId, { email: 'bo@example.com', available: false });
    await addAgent(other.businessId, { email: 'someone@else.com' });

    // Act
    const res = await invoke('GET /team/v1', { apiKey: tenant.apiKey });

    // Assess
    expect(res.status).toBe(200);
    expect(res.body.agents).toHaveLength(2);
    const got = res.body.agents.find((a: any) => a.id === ana.id);
    expect(got).toEqual({ id: ana.id, name: 'Ana', email: 'ana@example.com', role: 'admin', is_available: true, assigned_conversations: 0 });
    const bo = res.body.agents.find((a: any) => a.email === 'bo@example.com');
    expect(bo).toMatchObject({ name: null, role: 'agent', is_available: false });
    expect(res.headers['x-ratelimit-limit']).toBe('100');
  });

  it.each([
    ['no header', undefined],
    ['no Bearer prefix', 'wak_0123456789012345678901234567890123456789'],
    ['wrong format', 'Bearer sk_live_123'],
    ['unknown key', 'Bearer wak_0123456789012345678901234567890123456789'],
  ])('answers 401 for %s', async (_label, authorization) => {
    const res = await invoke('GET /team/v1', { headers: authorization ? { authorization } : {} });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'unauthorized', message: expect.any(String) });
  });

  it('answers 403 for a key without team:read', async () => {
    const tenant = await newTenant(['contacts:read']);
    const res = await invoke('GET /team/v1', { apiKey: tenant.apiKey });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'forbidden', message: expect.stringContaining('team:read') });
  });

  it('refuses a revoked key on the very next request', async () => {
    const tenant = await newTenant(['team:read']);
    expect((await invoke('GET /team/v1', { apiKey: tenant.apiKey })).status).toBe(200);
    await revokeApiKey(tenant.keyId);
    const res = await invoke('GET /team/v1', { apiKey: tenant.apiKey });
    expect(res.status).toBe(401);
    expect(res.body.message).toMatch(/revoked/);
  });
});
