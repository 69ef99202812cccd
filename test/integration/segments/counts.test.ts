import { randomUUID } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { db, dynamo, table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';
import { invoke, newTenant } from '../../support/api.ts';
import { contact, seedContacts, daysAgoIso } from './seed.ts';

/** Runs `work`, and names each read of the contact projection (the shard index) it made, at the table client. */
async function withProjectionReads<T>(work: () => Promise<T>): Promise<{ result: T; projectionReads: string[] }> {
  const projectionReads: string[] = [];
  dynamo.middlewareStack.add((next, context) => async (args) => {
    if ((args.input as { IndexName?: string }).IndexName === 'shard') projectionReads.push(String(context.commandName));
    return next(args);
  }, { step: 'initialize', name: 'projectionReads' });
  try {
    return { result: await work(), projectionReads };
  } finally {
    dynamo.middlewareStack.remove('projectionReads');
  }
}

describe('live counts', () => {
  it('lists segments with live counts that follow contact changes, soft-deleted contacts excluded', async () => {
    // Prepare
    const t = await newTenant();
    const [a, b] = await seedContacts(t.businessId, [contact({ tags: ['vip'] }), contact({ tags: ['vip'] }), contact({ created_at: daysAgoIso(40) })]);
    const dyn = (await invoke('POST /segments', { apiKey: t.apiKey, body: { name: 'VIP', type: 'dynamic', rules: { version: 3, filters: { tags: { any: ['vip'] } } } } })).body.data.id;
    const recent = (await invoke('POST /segments', { apiKey: t.apiKey, body: { name: 'Recent', type: 'dynamic', rules: { version: 3, filters: { created_at: { within_days: 30 } } } } })).body.data.id;
    const stat = (await invoke('POST /segments', { apiKey: t.apiKey, body: { name: 'S', type: 'static' } })).body.data.id;
    await invoke('POST /segments/{id}/members', { apiKey: t.apiKey, params: { id: stat }, body: { action: 'add', contactIds: [a.id, b.id] } });

    // Act: soft-delete a through the contacts area (the projection goes away, deleted_at is set, the counters follow)
    const { deleteContact } = await import('#shared/contacts/service.ts');
    await deleteContact(t.businessId, a.id);
    const res = await invoke('GET /segments', { apiKey: t.apiKey });

    // Assess
    expect(res.status).toBe(200);
    const counts = Object.fromEntries(res.body.data.map((s: any) => [s.id, s.contactCount]));
    expect(counts).toEqual({ [dyn]: 1, [recent]: 1, [stat]: 1 });
    const detail = await invoke('GET /segments/{id}', { apiKey: t.apiKey, params: { id: stat } });
    expect(detail.body.data.contacts.map((c: any) => c.id)).toEqual([b.id]);
  });

  it('shows v3 filters for legacy rules only when an exact equivalent counts the same', async () => {
    const t = await newTenant();
    await seedContacts(t.businessId, [contact({ tags: ['vip'], name: 'Ana' }), contact({ tags: ['lead'], name: 'Bo' })]);
    const convertible = { operator: 'AND', conditions: [{ field: 'tags', operator: 'contains', value: 'vip' }, { field: 'name', operator: 'contains', value: 'an' }] };
    const notConvertible = { operator: 'OR', conditions: [{ field: 'tags', operator: 'contains', value: 'vip' }, { field: 'name', operator: 'equals', value: 'bo' }] };
    const a = (await invoke('POST /segments', { apiKey: t.apiKey, body: { name: 'A', type: 'dynamic', rules: convertible } })).body.data.id;
    const b = (await invoke('POST /segments', { apiKey: t.apiKey, body: { name: 'B', type: 'dynamic', rules: notConvertible } })).body.data.id;

    const ra = await invoke('GET /segments/{id}', { apiKey: t.apiKey, params: { id: a } });
    const rb = await invoke('GET /segments/{id}', { apiKey: t.apiKey, params: { id: b } });

    expect(ra.body.data).toMatchObject({ rulesFormat: 'legacy', rules: convertible, contactCount: 1, filters: { tags: { all: ['vip'] }, name: { contains: 'an' } } });
    expect(rb.body.data).toMatchObject({ rulesFormat: 'legacy', contactCount: 2, filters: null });
  });

  it('reports rulesError for stored rules that are no longer valid, with nobody in the segment', async () => {
    const t = await newTenant();
    await seedContacts(t.businessId, [contact({ tags: ['vip'] })]);
    const id = (await invoke('POST /segments', { apiKey: t.apiKey, body: { name: 'VIP', type: 'dynamic', rules: { version: 3, filters: { tags: { any: ['vip'] } } } } })).body.data.id;
    // A rule stored by an older version of the service that today's grammar no longer accepts.
    const { getSegment } = await import('#shared/segments/repository.ts');
    const stored = await getSegment(t.businessId, id);
    await db.send(new PutCommand({ TableName: table(), Item: { ...keys.segment(t.businessId, id), type: 'segment', ...stored, rules: { version: 3, filters: { vip_level: 3 } } } }));

    const detail = await invoke('GET /segments/{id}', { apiKey: t.apiKey, params: { id } });
    const list = await invoke('GET /segments', { apiKey: t.apiKey });

    expect(detail.status).toBe(200);
    expect(detail.body.data).toMatchObject({ id, contactCount: 0, contacts: [], rulesError: expect.stringMatching(/vip_level.*Correct the rule and retry\.$/) });
    expect(list.body.data[0]).toMatchObject({ id, contactCount: 0, rulesError: expect.any(String) });
    const fixed = await invoke('PATCH /segments/{id}', { apiKey: t.apiKey, params: { id }, body: { rules: { version: 3, filters: { tags: { any: ['vip'] } } } } });
    expect(fixed.body.data.rulesError).toBeUndefined();
    expect(fixed.body.data.contactCount).toBe(1);
  });

  it('has no countStale when the count was computed', async () => {
    const t = await newTenant();
    const res = await invoke('POST /segments', { apiKey: t.apiKey, body: { name: 'x', type: 'dynamic', rules: { version: 3, filters: { origin: 'api' } } } });
    expect(res.body.data.countStale).toBeUndefined();
  });

  it('counts and pages a large static segment from its members, without reading the business\'s other contacts', async () => {
    // Prepare: 6,000 contacts, 2,500 of them (a static segment past the batch-read size of one group) made members
    // with different creation times, 10 of the members soft-deleted afterwards
    const t = await newTenant();
    const base = Date.now() - 86_400_000;
    const all = await seedContacts(t.businessId, Array.from({ length: 6000 }, (_, i) => contact({ created_at: new Date(base + i * 1000).toISOString() })), 8);
    const members = all.filter((_, i) => i % 2 === 0).slice(0, 2500);
    const stat = (await invoke('POST /segments', { apiKey: t.apiKey, body: { name: 'Imported list', type: 'static' } })).body.data.id;
    const added = await invoke('POST /segments/{id}/members', { apiKey: t.apiKey, params: { id: stat }, body: { action: 'add', contactIds: members.map((c) => c.id) } });
    expect(added.body.data).toMatchObject({ affected: 2500, contactCount: 2500 });
    const { deleteContact } = await import('#shared/contacts/service.ts');
    const deleted = members.slice(-10);
    for (const c of deleted) await deleteContact(t.businessId, c.id);
    const newestActive = members.slice(0, -10).reverse().slice(0, 5).map((c) => c.id);

    // Act: the list and a page of the detail, with every read of the contact projection (the shard index) counted
    const { result: [list, detail], projectionReads } = await withProjectionReads(async () => [
      await invoke('GET /segments', { apiKey: t.apiKey }),
      await invoke('GET /segments/{id}', { apiKey: t.apiKey, params: { id: stat }, query: { limit: '5', offset: '0' } }),
    ]);

    // Assess: exact counts of active members, newest first, and the projection never read
    expect(list.status).toBe(200);
    expect(list.body.data.find((s: any) => s.id === stat)).toMatchObject({ contactCount: 2490 });
    expect(list.body.data.find((s: any) => s.id === stat).countStale).toBeUndefined();
    expect(detail.status).toBe(200);
    expect(detail.body.data).toMatchObject({ contactCount: 2490, pagination: { total: 2490, hasMore: true } });
    expect(detail.body.data.contacts.map((c: any) => c.id)).toEqual(newestActive);
    expect(projectionReads).toEqual([]);
  });

  it('counts static segments holding more than 10,000 members between them by the projection read, exactly', async () => {
    // Prepare: 10,200 active contacts and 50 soft-deleted ones; A holds 6,000 active and the 50 deleted, B 5,000
    // active (800 in both): 10,250 distinct members, past what is read by id
    const t = await newTenant();
    const active = await seedContacts(t.businessId, Array.from({ length: 10_200 }, () => contact()), 8);
    const gone = await seedContacts(t.businessId, Array.from({ length: 50 }, () => contact({ deleted_at: new Date().toISOString() })));
    const { putSegment, addMember } = await import('#shared/segments/repository.ts');
    const { MAX_READ_BY_ID } = await import('#shared/segments/count.ts');
    const { batchWriteAll } = await import('#shared/store/batch.ts');
    const now = new Date().toISOString();
    const segment = async (name: string, members: { id: string }[]) => {
      const id = randomUUID();
      await putSegment(t.businessId, { id, name, description: null, color: null, segmentType: 'static', rules: null, rulesFormat: null, contactCount: 0, countedAt: null, counterKey: null, createdAt: now, updatedAt: now });
      // The first member through the repository; the rest as the same items, in batches (setup only).
      const [first, ...rest] = members;
      await addMember(t.businessId, id, first.id, now);
      await batchWriteAll(rest.map((c) => ({ PutRequest: { Item: { ...keys.segmentMember(t.businessId, id, c.id), type: 'segmentMember', contactId: c.id, addedAt: now } } })), { concurrency: 8 });
      return id;
    };
    const a = await segment('A', [...active.slice(0, 6000), ...gone]);
    const b = await segment('B', active.slice(5200));
    expect(new Set([...active.slice(0, 6000), ...gone, ...active.slice(5200)].map((c) => c.id)).size).toBeGreaterThan(MAX_READ_BY_ID);

    // Act
    const { result: list, projectionReads } = await withProjectionReads(() => invoke('GET /segments', { apiKey: t.apiKey }));

    // Assess
    expect(list.status).toBe(200);
    const counts = Object.fromEntries(list.body.data.map((s: any) => [s.id, [s.contactCount, s.countStale ?? false]]));
    expect(counts).toEqual({ [a]: [6000, false], [b]: [5000, false] });
    expect(projectionReads.length).toBeGreaterThan(0);
  }, 60_000);
});
