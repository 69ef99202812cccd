/**
 * Segments through the local stack over HTTP, with contacts created, changed and soft-deleted through
 * the contacts endpoints (so the projection the counts read is the one the contacts area really writes).
 */
import { startTestStack, type LocalStack } from '../support/stack.ts';

let stack: LocalStack;

beforeAll(async () => {
  stack = await startTestStack({ demo: true });
}, 60_000);
afterAll(() => stack?.stop());

const call = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${stack.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${stack.demo!.apiKey}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
};

describe('segments over HTTP', () => {
  it('counts, lists and changes members of contacts written by the contacts API', async () => {
    // Prepare
    const made = [];
    for (const [i, tags] of [['vip'], ['vip', 'lead'], ['lead']].entries()) {
      const res = await call('POST', '/contacts/v1', { phone_number: `+52155500000${i}${Date.now() % 100}`, name: `Cliente ${i}`, tags });
      expect(res.status).toBe(201);
      made.push(res.body.contact);
    }
    const dynamic = await call('POST', '/segments', { name: 'VIP', type: 'dynamic', rules: { version: 3, filters: { tags: { any: ['vip'] } } } });
    const legacy = await call('POST', '/segments', { name: 'Lead (v1)', type: 'dynamic', rules: { operator: 'AND', conditions: [{ field: 'tags', operator: 'contains', value: 'lead' }] } });
    const stat = await call('POST', '/segments', { name: 'Hand-picked', type: 'static' });

    // Act
    const added = await call('POST', `/segments/${stat.body.data.id}/members`, { action: 'add', search: 'cliente' });
    const deleted = await call('DELETE', `/contacts/v1/${made[0].id}`);
    const updated = await call('PATCH', `/contacts/v1/${made[2].id}`, { tags: ['vip'] });
    const list = await call('GET', '/segments');
    const legacyDetail = await call('GET', `/segments/${legacy.body.data.id}`);

    // Assess
    expect(dynamic.status).toBe(201);
    expect(dynamic.body.data.contactCount).toBeGreaterThanOrEqual(2);
    expect(added.body.data).toMatchObject({ action: 'add', affected: 3, contactCount: 3, countStale: false });
    expect(deleted.status).toBe(200);
    expect(updated.status).toBe(200);
    const byId = Object.fromEntries(list.body.data.map((s: any) => [s.id, s]));
    expect(byId[stat.body.data.id].contactCount).toBe(2);
    expect(byId[dynamic.body.data.id].contactCount).toBe(dynamic.body.data.contactCount - 1 + 1);
    expect(legacyDetail.body.data).toMatchObject({ rulesFormat: 'legacy', filters: { tags: { all: ['lead'] } } });
    expect(legacyDetail.body.data.contacts.map((c: any) => c.id)).toContain(made[1].id);
    const notFound = await call('GET', '/segments/not-a-uuid');
    expect(notFound).toEqual({ status: 404, body: { error: 'not_found', message: 'Segment not found' } });
  });

  it('answers the contract error shapes, previews, evaluates, updates and reports usage', async () => {
    // Prepare
    await call('POST', '/contacts/v1', { phone_number: `+1415555${String(Date.now() % 10000).padStart(4, '0')}`, name: 'Preview Person', tags: ['preview-tag'] });

    // Act
    const ruleError = await call('POST', '/segments', { name: 'x', type: 'static', rules: { version: 3, filters: { tags: { any: ['a'] } } } });
    const formatError = await call('POST', '/segments', { type: 'dynamic' });
    const preview = await call('POST', '/segments/preview', { rules: { version: 3, filters: { tags: { any: ['preview-tag'] } } } });
    const seg = await call('POST', '/segments', { name: 'P', type: 'dynamic', rules: { version: 3, filters: { name: 'preview person' } }, autoRefreshInterval: 60 });
    const patched = await call('PATCH', `/segments/${seg.body.data.id}`, { type: 'static', color: '#00ff00' });
    const evaluated = await call('POST', `/segments/${seg.body.data.id}/evaluate`);
    const usage = await call('GET', `/segments/${seg.body.data.id}/usage`);
    const members = await call('POST', `/segments/${seg.body.data.id}/members`, { action: 'add', search: 'preview' });
    const deleted = await call('DELETE', `/segments/${seg.body.data.id}`);

    // Assess
    expect(ruleError.status).toBe(400);
    expect(ruleError.body).toEqual({ error: expect.stringMatching(/Correct the rule and retry\.$/) });
    expect(formatError.status).toBe(400);
    expect(formatError.body).toEqual({ error: 'Datos inválidos', details: expect.any(Array) });
    expect(preview.status).toBe(200);
    expect(preview.body.data).toMatchObject({ count: 1, preview: [expect.objectContaining({ name: 'Preview Person' })] });
    expect(seg.status).toBe(201);
    expect(seg.body.data.contactCount).toBe(1);
    expect(patched.body.data).toMatchObject({ type: 'dynamic', color: '#00ff00', typeChangeIgnored: true });
    expect(evaluated.body.data).toMatchObject({ contactCount: 1 });
    expect(usage.body).toEqual({ data: { segmentId: seg.body.data.id, campaigns: [], agents: [] } });
    expect(members.status).toBe(400);
    expect(members.body.error).toMatch(/static/);
    expect(deleted.status).toBe(200);
  });
});
