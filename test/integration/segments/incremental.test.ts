/**
 * Maintained dynamic segment counts: they follow every kind of contact write, concurrent ones included, they
 * lose and double nothing when writes race the backfill, and relative-date rules stay exact as days pass.
 * Truth is always a fresh scan of the projection with the same rules at the same instant.
 */
import { randomUUID } from 'node:crypto';
import pLimit from 'p-limit';
import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { countCalls, measure } from '../../support/dynamo-calls.ts';
import { db, table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';
import { newTenant } from '../../support/api.ts';
import { contact, seedContacts, daysAgoIso } from './seed.ts';

const VIP = { version: 3, filters: { tags: { any: ['vip'] }, opted_out: false } };
const RECENT = { version: 3, filters: { created_at: { within_days: 30 } } };
const OLD_LEGACY = { operator: 'AND', conditions: [{ field: 'created_at', operator: 'older_than_days', value: 30 }, { field: 'tags', operator: 'not_contains', value: 'vip' }] };

async function scanCount(bid: string, rules: unknown, nowMs: number): Promise<number> {
  const { parseRules, rulesCondition } = await import('#shared/segments/rules.ts');
  const { compileCondition } = await import('#shared/contacts/filters/predicate.ts');
  const { selectMatching } = await import('#shared/contacts/filters/scan.ts');
  const parsed = parseRules(rules);
  if (!parsed.ok) throw new Error(parsed.error);
  return (await selectMatching(bid, compileCondition(rulesCondition(parsed, nowMs)))).length;
}

async function counts(bid: string) {
  const { listSegmentViews } = await import('#shared/segments/service.ts');
  return Object.fromEntries((await listSegmentViews(bid)).map((s) => [s.name, { count: s.contactCount, stale: s.countStale ?? false }]));
}

describe('maintained segment counts', () => {
  afterEach(async () => {
    const { clock } = await import('#shared/segments/counters/clock.ts');
    clock.now = () => Date.now();
  });

  it('follow concurrent creates, updates, tags, stages, opt-outs, deletes and bulk operations exactly', async () => {
    // Prepare
    const t = await newTenant();
    const bid = t.businessId;
    const { createSegment } = await import('#shared/segments/service.ts');
    const contacts = await import('#shared/contacts/service.ts');
    const { runBulk } = await import('#shared/contacts/bulk.ts');
    const seeded = await seedContacts(bid, Array.from({ length: 120 }, (_, i) => contact({ tags: i % 3 === 0 ? ['vip'] : [], created_at: daysAgoIso(i % 60) })), 4);
    for (const [name, rules] of [['vip', VIP], ['recent', RECENT], ['old', OLD_LEGACY]] as const) await createSegment(bid, { name, type: 'dynamic', rules });
    expect(await counts(bid)).toEqual({ vip: { count: 40, stale: false }, recent: { count: await scanCount(bid, RECENT, Date.now()), stale: false }, old: { count: await scanCount(bid, OLD_LEGACY, Date.now()), stale: false } });

    // Act: many writes of every kind at once
    const limit = pLimit(12);
    const ops: (() => Promise<unknown>)[] = [
      ...Array.from({ length: 30 }, (_, i) => () => contacts.createContact(bid, { phone_number: `+5255${String(7000000 + i)}`, tags: i % 2 ? ['vip'] : [] } as any)),
      ...seeded.slice(0, 30).map((c, i) => () => contacts.updateContact(bid, c.id, i % 2 ? { add_tags: ['VIP'] } : { remove_tags: ['vip'] })),
      ...seeded.slice(30, 45).map((c) => () => contacts.updateContact(bid, c.id, { opted_out: true })),
      ...seeded.slice(45, 60).map((c) => () => contacts.deleteContact(bid, c.id)),
      () => runBulk(bid, { operation: 'add_tags', contact_ids: seeded.slice(60, 90).map((c) => c.id), tags: ['vip'] } as any),
      () => runBulk(bid, { operation: 'delete', contact_ids: seeded.slice(90, 100).map((c) => c.id) } as any),
      () => runBulk(bid, { operation: 'create', contacts: Array.from({ length: 20 }, (_, i) => ({ phone_number: `+5255${String(8000000 + i)}`, tags: ['vip'] })) } as any),
    ];
    await Promise.all(ops.sort(() => Math.random() - 0.5).map((op) => limit(op)));

    // Assess
    const now = Date.now();
    expect(await counts(bid)).toEqual({
      vip: { count: await scanCount(bid, VIP, now), stale: false },
      recent: { count: await scanCount(bid, RECENT, now), stale: false },
      old: { count: await scanCount(bid, OLD_LEGACY, now), stale: false },
    });
  }, 120_000);

  it('loses and doubles nothing when contact writes race the backfill', async () => {
    // Prepare: contacts written straight into the table, then a segment whose counters start empty
    const t = await newTenant();
    const bid = t.businessId;
    // Relative-date rules and spread-out dates make the backfill take many small steps, so the writes meet it mid-way.
    const seeded = await seedContacts(bid, Array.from({ length: 6000 }, (_, i) => contact({ tags: i % 2 ? ['vip'] : [], created_at: daysAgoIso((i * 7919) % 300 + 0.5) })), 8);
    const rules = { version: 3, filters: { tags: { any: ['vip'] }, created_at: { within_days: 365 } } };
    const { putSegment } = await import('#shared/segments/repository.ts');
    const { registerCounters } = await import('#shared/segments/counters/registry.ts');
    const { maintainedCounts } = await import('#shared/segments/counters/counts.ts');
    const contacts = await import('#shared/contacts/service.ts');
    const now = new Date().toISOString();
    const record = { id: randomUUID(), name: 'vip', description: null, color: null, segmentType: 'dynamic' as const, rules, rulesFormat: 'filters' as const, contactCount: 0, countedAt: null, counterKey: 'race0test1', createdAt: now, updatedAt: now };
    await putSegment(bid, record);
    await registerCounters(bid);

    // Act: the backfill and 300 writes at once
    const limit = pLimit(8);
    const writes: (() => Promise<unknown>)[] = seeded.slice(0, 300).map((c, i) => () => (i % 5 === 0 ? contacts.deleteContact(bid, c.id) : contacts.updateContact(bid, c.id, i % 2 ? { remove_tags: ['vip'] } : { add_tags: ['vip'] })));
    const [result] = await Promise.all([maintainedCounts(bid, [record], undefined), Promise.all(writes.map((w) => limit(w)))]);
    const after = await maintainedCounts(bid, [record], undefined);

    // Assess
    expect(result.get(record.id)!.stale).toBe(false);
    expect(after.get(record.id)).toMatchObject({ count: await scanCount(bid, rules, Date.now()), stale: false });
  }, 120_000);

  it('stays exact for relative dates as days pass without any contact changing, and folds past steps', async () => {
    // Prepare
    const { clock } = await import('#shared/segments/counters/clock.ts');
    const t = await newTenant();
    const bid = t.businessId;
    const start = Date.now();
    await seedContacts(bid, Array.from({ length: 60 }, (_, i) => contact({ created_at: new Date(start - (i * 12 + 5) * 3_600_000).toISOString(), tags: i % 4 ? [] : ['vip'] })), 4);
    const { createSegment } = await import('#shared/segments/service.ts');
    const week = { version: 3, filters: { created_at: { within_days: 7 } } };
    const legacy = { operator: 'OR', conditions: [{ field: 'created_at', operator: 'older_than_days', value: 20 }, { field: 'tags', operator: 'contains', value: 'vip' }] };
    await createSegment(bid, { name: 'week', type: 'dynamic', rules: week });
    await createSegment(bid, { name: 'legacy', type: 'dynamic', rules: legacy });

    const { listSegments } = await import('#shared/segments/repository.ts');
    const { maintainedCounts } = await import('#shared/segments/counters/counts.ts');
    const weekRecord = (await listSegments(bid)).find((s) => s.name === 'week')!;

    // Act and Assess: day by day (and at odd hours), the maintained count equals a scan at that instant
    const seen: number[] = [];
    // Around 163 h the newest contact (created 5 h before start) leaves the 7-day window: reads 20 s before and
    // within the same minute fold a backfill item whose next step is later in the current minute.
    const flip = 163 * 3_600_000;
    for (const ms of [0, 1, 30, 77, 24 * 7, 24 * 15 + 3, 24 * 22, 24 * 40].map((h) => h * 3_600_000).flatMap((x) => (x === 24 * 7 * 3_600_000 ? [flip - 20_000, flip + 1_000, flip + 30_000, x] : [x]))) {
      const at = start + ms;
      clock.now = () => at;
      // One segment read alone first (as GET /segments/{id} does): its fold must keep the other segment's steps.
      await maintainedCounts(bid, [weekRecord], undefined);
      const c = await counts(bid);
      expect(c).toEqual({ week: { count: await scanCount(bid, week, at), stale: false }, legacy: { count: await scanCount(bid, legacy, at), stale: false } });
      seen.push(c.week.count);
    }
    expect(new Set(seen).size).toBeGreaterThan(3); // the counts did move with time
    const left = await Promise.all(Array.from({ length: 16 }, (_, r) => db.send(new QueryCommand({
      TableName: table(), KeyConditionExpression: 'pk = :pk AND begins_with(sk, :t)', ExpressionAttributeValues: { ':pk': keys.segmentCounterPk(bid, r), ':t': 'T#' },
    }))));
    expect(left.reduce((n, p) => n + (p.Items?.length ?? 0), 0)).toBe(0); // every step 40 days back is folded
  }, 120_000);
  it('build contact writes from the container\'s copy: no counter reads while it is current, exact when another container changed the counters', async () => {
    // Prepare: a segment, and a first write that loads this container's copy of the counters
    const t = await newTenant();
    const bid = t.businessId;
    const { dynamo } = await import('#shared/store/client.ts');
    countCalls(dynamo);
    const { createSegment } = await import('#shared/segments/service.ts');
    const { putSegment } = await import('#shared/segments/repository.ts');
    const contacts = await import('#shared/contacts/service.ts');
    const seeded = await seedContacts(bid, Array.from({ length: 40 }, (_, i) => contact({ tags: i % 2 ? ['vip'] : [] })), 4);
    await createSegment(bid, { name: 'vip', type: 'dynamic', rules: VIP });
    await contacts.updateContact(bid, seeded[0].id, { add_tags: ['vip'] });

    // Act 1: a write with a current copy
    const current = await measure(() => contacts.updateContact(bid, seeded[2].id, { add_tags: ['vip'] }));

    // Assess 1: the contact read and the transaction, nothing else
    expect(current.calls.map((c) => c.command)).toEqual(['GetItemCommand', 'TransactWriteItemsCommand']);

    // Act 2: another container adds a segment (its segment item and the `v` bump, which this container does not hear of)
    const now = new Date().toISOString();
    const other = { id: randomUUID(), name: 'other', description: null, color: null, segmentType: 'dynamic' as const, rules: RECENT, rulesFormat: 'filters' as const, contactCount: 0, countedAt: null, counterKey: 'other0copy', createdAt: now, updatedAt: now };
    await putSegment(bid, other);
    await Promise.all(Array.from({ length: 16 }, (_, r) => db.send(new UpdateCommand({ TableName: table(), Key: keys.segmentCounter(bid, r), UpdateExpression: 'ADD v :one', ExpressionAttributeValues: { ':one': 1 } }))));
    expect((await counts(bid)).other).toEqual({ count: 40, stale: false }); // backfilled
    const stale = await measure(() => Promise.all(seeded.slice(4, 24).map((c, i) => (i % 3 ? contacts.updateContact(bid, c.id, { remove_tags: ['vip'] }) : contacts.deleteContact(bid, c.id)))));

    // Assess 2: the stale copy cost cancelled transactions and one re-read, and the counts are exact
    expect(stale.calls.some((c) => c.command === 'BatchGetItemCommand')).toBe(true);
    const at = Date.now();
    expect(await counts(bid)).toEqual({ vip: { count: await scanCount(bid, VIP, at), stale: false }, other: { count: await scanCount(bid, RECENT, at), stale: false } });
  }, 120_000);
});
