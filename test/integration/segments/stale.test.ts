/**
 * countStale: with a zero time budget no live count can finish, so every count is the last stored one.
 * The budget is read from the environment once, so this file sets it before loading any service module.
 */
describe('count time budget', () => {
  it('answers countStale with the last stored count instead of failing', async () => {
    // Prepare
    process.env.SEGMENT_COUNT_BUDGET_MS = '0';
    const { invoke, newTenant } = await import('../../support/api.ts');
    const { contact, seedContacts } = await import('./seed.ts');
    const { storeCount } = await import('#shared/segments/repository.ts');
    const t = await newTenant();
    const [vip] = await seedContacts(t.businessId, [contact({ tags: ['vip'] }), contact({ tags: ['vip'] })]);
    const created = await invoke('POST /segments', { apiKey: t.apiKey, body: { name: 'VIP', type: 'dynamic', rules: { version: 3, filters: { tags: { any: ['vip'] } } } } });
    const id = created.body.data.id;
    await storeCount(t.businessId, id, 7, new Date().toISOString());
    const stat = (await invoke('POST /segments', { apiKey: t.apiKey, body: { name: 'S', type: 'static' } })).body.data.id;

    // Act
    const list = await invoke('GET /segments', { apiKey: t.apiKey });
    const detail = await invoke('GET /segments/{id}', { apiKey: t.apiKey, params: { id } });
    const evaluate = await invoke('POST /segments/{id}/evaluate', { apiKey: t.apiKey, params: { id } });
    const membersRes = await invoke('POST /segments/{id}/members', { apiKey: t.apiKey, params: { id: stat }, body: { action: 'add', contactIds: [vip.id] } });

    // Assess
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ contactCount: 0, countStale: true });
    expect(list.body.data.find((s: any) => s.id === id)).toMatchObject({ contactCount: 7, countStale: true });
    expect(detail.body.data).toMatchObject({ contactCount: 7, countStale: true });
    expect(evaluate.body.data).toMatchObject({ contactCount: 7, countStale: true });
    expect(membersRes.body.data).toEqual({ action: 'add', affected: 1, contactIds: [vip.id], contactCount: 0, countStale: true });
  });
});
