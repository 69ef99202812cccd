/**
 * A contact selection past its time budget answers one and the same 503 `selection_timeout`, whether it is a
 * preview of rules or a member selection by filters. The budget is zero here (read once, before the service loads).
 */
import type { InvokeResult } from '../../support/api.ts';

process.env.SEGMENT_COUNT_BUDGET_MS = '0';
const { invoke, newTenant } = await import('../../support/api.ts');
const { contact, seedContacts } = await import('./seed.ts');

describe('a selection past its time budget', () => {
  it('answers 503 selection_timeout for a preview and for a member selection by filters alike', async () => {
    // Prepare
    const t = await newTenant();
    await seedContacts(t.businessId, [contact({ tags: ['vip'] })]);
    const segment = await invoke('POST /segments', { apiKey: t.apiKey, body: { name: 'S', type: 'static' } });
    expect(segment.status).toBe(201);

    // Act
    const preview = await invoke('POST /segments/preview', { apiKey: t.apiKey, body: { rules: { version: 3, filters: { tags: { any: ['vip'] } } } } });
    const members = await invoke('POST /segments/{id}/members', { apiKey: t.apiKey, params: { id: segment.body.data.id }, body: { action: 'add', filters: { tags: { any: ['vip'] } } } });

    // Assess
    for (const res of [preview, members] as InvokeResult[]) {
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ error: 'selection_timeout', message: expect.stringMatching(/in time/) });
    }
  });
});
