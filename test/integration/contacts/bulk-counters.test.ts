/**
 * A bulk group is sized for its own items and a little room per segment counter range; when a business's
 * time-relative segments add more counter items than that room (commit's HookItemsOverflow: nothing written),
 * the group is redone contact by contact. Every contact is still created once, and every count stays exact.
 */
import { newTenant } from '../../support/api.ts';

describe('bulk create with many time-relative segments', () => {
  it('creates every contact and counts each once when the counter items outgrow a group', async () => {
    // Prepare: ten relative-date segments, so each range a group touches carries about ten dated counter items.
    const { businessId: bid } = await newTenant();
    const { createSegment, listSegmentViews } = await import('#shared/segments/service.ts');
    for (let days = 1; days <= 10; days++) {
      await createSegment(bid, { name: `new in ${days}d`, type: 'dynamic', rules: { version: 3, filters: { created_at: { within_days: days } } } });
    }
    const { runBulk } = await import('#shared/contacts/bulk.ts');

    // Act
    const out = await runBulk(bid, { operation: 'create', contacts: Array.from({ length: 100 }, (_, i) => ({ phone_number: `+5255${String(6100000 + i)}` })) } as any);

    // Assess
    const results = (out as { results: { success: boolean }[] }).results;
    expect(results).toHaveLength(100);
    expect(results.filter((r) => !r.success)).toEqual([]);
    const views = await listSegmentViews(bid);
    expect(views.map((v) => [v.contactCount, v.countStale ?? false])).toEqual(Array.from({ length: 10 }, () => [100, false]));
  }, 60_000);
});
