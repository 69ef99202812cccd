import { randomUUID } from 'node:crypto';
import { invoke, newTenant, type InvokeResult, type TestTenant } from '../../support/api.ts';
import { contact, seedContacts, daysAgoIso } from './seed.ts';

const V3_VIP = { version: 3, filters: { tags: { any: ['vip'] } } };
const LEGACY_VIP = { operator: 'AND', conditions: [{ field: 'tags', operator: 'contains', value: 'vip' }] };

const create = (t: TestTenant, body: unknown) => invoke('POST /segments', { apiKey: t.apiKey, body });

/** A request repeated after each 503 `service_unavailable`, waiting its `Retry-After`, as a client does (at most 10 times). */
async function retried503(request: () => Promise<InvokeResult>): Promise<InvokeResult> {
  let res = await request();
  for (let tries = 1; res.status === 503 && tries < 10; tries++) {
    await new Promise((resolve) => setTimeout(resolve, Number(res.headers['Retry-After'] ?? 1) * 1000));
    res = await request();
  }
  return res;
}

describe('POST /segments', () => {
  it('creates a dynamic v3 segment with its live count and every Segment field', async () => {
    // Prepare
    const t = await newTenant();
    await seedContacts(t.businessId, [contact({ tags: ['vip'] }), contact({ tags: ['VIP', 'x'] }), contact({ tags: ['x'] }), contact({ tags: ['vip'], deleted_at: daysAgoIso(0) })]);

    // Act
    const res = await create(t, { name: 'VIPs', type: 'dynamic', rules: V3_VIP, description: 'best', color: '#ff0000', autoRefreshInterval: 3600 });

    // Assess
    expect(res.status).toBe(201);
    expect(res.body.data).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/), name: 'VIPs', description: 'best', color: '#ff0000', type: 'dynamic',
      contactCount: 2, rules: V3_VIP, rulesFormat: 'filters', filters: V3_VIP.filters, createdAt: expect.any(String), updatedAt: expect.any(String),
    });
  });

  it('stores legacy rules as given with rulesFormat legacy', async () => {
    const t = await newTenant();
    const res = await create(t, { name: 'Legacy', type: 'dynamic', rules: LEGACY_VIP });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ rules: LEGACY_VIP, rulesFormat: 'legacy' });
    const v2 = { version: 2, operator: 'OR', groups: [{ operator: 'AND', conditions: [{ field: 'created_at', operator: 'within_days', value: 7 }] }] };
    const res2 = await create(t, { name: 'Legacy v2', type: 'dynamic', rules: v2 });
    expect(res2.status).toBe(201);
    expect(res2.body.data).toMatchObject({ rules: v2, rulesFormat: 'legacy' });
  });

  it('creates a static segment and ignores legacy, null or empty rules on it', async () => {
    const t = await newTenant();
    for (const rules of [LEGACY_VIP, null, {}, undefined]) {
      const res = await create(t, { name: 'Static', type: 'static', rules });
      expect(res.status).toBe(201);
      expect(res.body.data).toMatchObject({ type: 'static', contactCount: 0, rules: null, rulesFormat: null, filters: null });
    }
  });

  it.each([
    ['dynamic rules absent', { name: 'x', type: 'dynamic' }, /rules/],
    ['dynamic rules null', { name: 'x', type: 'dynamic', rules: null }, /rules/],
    ['v3 rules on a static segment', { name: 'x', type: 'static', rules: V3_VIP }, /static/],
    ['rules of an unknown version on a static segment', { name: 'x', type: 'static', rules: { version: 4, filters: { tags: { any: ['a'] } } } }, /version 4/],
    ['rules that are not an object on a static segment', { name: 'x', type: 'static', rules: 'abc' }, /object/],
    ['unknown rules version', { name: 'x', type: 'dynamic', rules: { version: 7, filters: { name: 'a' } } }, /version/],
    ['empty filters', { name: 'x', type: 'dynamic', rules: { version: 3, filters: {} } }, /empty/],
    ['empty value', { name: 'x', type: 'dynamic', rules: { version: 3, filters: { name: '' } } }, /empty/],
    ['empty list', { name: 'x', type: 'dynamic', rules: { version: 3, filters: { tags: { any: [] } } } }, /empty list/],
    ['empty object', { name: 'x', type: 'dynamic', rules: { version: 3, filters: { created_at: {} } } }, /empty object/],
    ['unknown key in filters', { name: 'x', type: 'dynamic', rules: { version: 3, filters: { shoe: 1 } } }, /unknown/],
    ['unknown nested key', { name: 'x', type: 'dynamic', rules: { version: 3, filters: { tags: { any: ['a'], most: ['b'] } } } }, /unknown key/],
    ['extra key next to version and filters', { name: 'x', type: 'dynamic', rules: { version: 3, filters: { name: 'a' }, operator: 'AND' } }, /operator/],
    ['segment_id in segment filters', { name: 'x', type: 'dynamic', rules: { version: 3, filters: { segment_id: randomUUID() } } }, /segment_id/],
    ['phone without digits', { name: 'x', type: 'dynamic', rules: { version: 3, filters: { phone: 'abc' } } }, /digits/],
    ['legacy unknown field', { name: 'x', type: 'dynamic', rules: { operator: 'AND', conditions: [{ field: 'zodiac', operator: 'equals', value: 'leo' }] } }, /unknown field/],
    ['legacy unknown operator', { name: 'x', type: 'dynamic', rules: { operator: 'AND', conditions: [{ field: 'tags', operator: 'resembles', value: 'a' }] } }, /unknown operator/],
    ['legacy without condition', { name: 'x', type: 'dynamic', rules: { operator: 'AND', conditions: [] } }, /no condition/],
  ])('answers 400 { error } for %s, ending with an instruction', async (_cause, body, message) => {
    const t = await newTenant();
    const res = await create(t, body);
    expect(res.status).toBe(400);
    expect(Object.keys(res.body)).toEqual(['error']);
    expect(res.body.error).toMatch(message);
    expect(res.body.error).toMatch(/Correct the rule and retry\.$/);
    const list = await invoke('GET /segments', { apiKey: t.apiKey });
    expect(list.body.data).toEqual([]);
  });

  it.each([
    ['missing name', { type: 'static' }],
    ['empty name', { name: '  ', type: 'static' }],
    ['unknown type', { name: 'x', type: 'smart' }],
    ['no body', undefined],
    ['a description of 1,000 emoji (2,000 characters allowed, but 4 KB as UTF-8)', { name: 'x', type: 'static', description: '😀'.repeat(1000) }],
  ])('answers 400 Datos inválidos for %s', async (_cause, body) => {
    const t = await newTenant();
    const res = await create(t, body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'Datos inválidos', details: expect.arrayContaining([expect.objectContaining({ field: expect.any(String), message: expect.any(String) })]) });
  });

  it('holds the cap of 50 dynamic segments under 60 concurrent creates (400 segment_limit_reached past it); static ones still go, and deleting one makes room', async () => {
    // Prepare: 60 dynamic segments asked for at once (and a static one, which does not count)
    const t = await newTenant();
    // All 60 run in this one process against one DynamoDB Local: on a loaded machine some outlast their 10 s and answer
    // 503 (retry shortly), which a client then retries as told; the cap must hold whatever the order.
    const attempts = await Promise.all(Array.from({ length: 60 }, (_, k) => retried503(() => create(t, { name: `D${k}`, type: 'dynamic', rules: { version: 3, filters: { tags: { any: [`t${k}`] } } } }))));
    const made: string[] = attempts.filter((r) => r.status === 201).map((r) => r.body.data.id);
    // Each one created or refused at the cap (one whose write landed before its 503 is refused when repeated, so the
    // 201s may be fewer than 50; the list below holds exactly 50).
    expect(made.length).toBeGreaterThanOrEqual(40);
    expect(made.length).toBeLessThanOrEqual(50);
    expect(attempts.filter((r) => r.status !== 201).map((r) => [r.status, r.body.error])).toEqual(Array(60 - made.length).fill([400, 'segment_limit_reached']));
    expect((await create(t, { name: 'S', type: 'static' })).status).toBe(201);

    // Act
    const refused = await create(t, { name: 'One more', type: 'dynamic', rules: V3_VIP });
    const staticAfter = await create(t, { name: 'S2', type: 'static' });
    const list = await invoke('GET /segments', { apiKey: t.apiKey });
    await invoke('DELETE /segments/{id}', { apiKey: t.apiKey, params: { id: made[0] } });
    const afterDelete = await create(t, { name: 'D50', type: 'dynamic', rules: V3_VIP });

    // Assess
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: 'segment_limit_reached', message: expect.stringContaining('50') });
    expect(staticAfter.status).toBe(201);
    expect(list.body.data.filter((s: { type: string }) => s.type === 'dynamic')).toHaveLength(50);
    expect(list.body.data.some((s: { name: string }) => s.name === 'One more')).toBe(false);
    expect(afterDelete.status).toBe(201);
  }, 120_000);
});

describe('the cap on segments per business', () => {
  it('refuses a segment past 1,000 with 400 segment_limit_reached, static or dynamic; GET /segments answers all 1,000', async () => {
    // Prepare: 999 static segments written as the service writes them
    const t = await newTenant();
    const { putSegment } = await import('#shared/segments/repository.ts');
    const { MAX_SEGMENTS } = await import('#shared/segments/service.ts');
    expect(MAX_SEGMENTS).toBe(1000);
    const at = new Date().toISOString();
    for (let i = 0; i < MAX_SEGMENTS - 1; i += 100) {
      await Promise.all(Array.from({ length: Math.min(100, MAX_SEGMENTS - 1 - i) }, (_, k) => putSegment(t.businessId, {
        id: randomUUID(), name: `S${i + k}`, description: null, color: null, segmentType: 'static', rules: null, rulesFormat: null,
        contactCount: 0, countedAt: null, counterKey: null, createdAt: at, updatedAt: at,
      })));
    }

    // Act
    const last = await create(t, { name: 'The thousandth', type: 'static' });
    const refusedStatic = await create(t, { name: 'One too many', type: 'static' });
    const refusedDynamic = await create(t, { name: 'One too many', type: 'dynamic', rules: V3_VIP });
    const list = await invoke('GET /segments', { apiKey: t.apiKey });

    // Assess
    expect(last.status).toBe(201);
    for (const refused of [refusedStatic, refusedDynamic]) {
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ error: 'segment_limit_reached', message: expect.stringContaining('1000') });
    }
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(MAX_SEGMENTS);
  }, 120_000);

  it('holds the cap of 1,000 under 20 concurrent creates beside 990 segments made before places, and a delete gives its place back', async () => {
    // Prepare: 990 segments without a place, as the service stored them before places
    const t = await newTenant();
    const { putSegment } = await import('#shared/segments/repository.ts');
    const at = new Date().toISOString();
    for (let i = 0; i < 990; i += 110) {
      await Promise.all(Array.from({ length: 110 }, (_, k) => putSegment(t.businessId, {
        id: randomUUID(), name: `Old ${i + k}`, description: null, color: null, segmentType: 'static', rules: null, rulesFormat: null,
        contactCount: 0, countedAt: null, counterKey: null, createdAt: at, updatedAt: at,
      })));
    }

    // Act
    const attempts = await Promise.all(Array.from({ length: 20 }, (_, k) => k % 4 === 0
      ? create(t, { name: `D${k}`, type: 'dynamic', rules: V3_VIP })
      : create(t, { name: `S${k}`, type: 'static' })));
    const made: string[] = attempts.filter((r) => r.status === 201).map((r) => r.body.data.id);
    const listed = (await invoke('GET /segments', { apiKey: t.apiKey })).body.data;
    await invoke('DELETE /segments/{id}', { apiKey: t.apiKey, params: { id: made[0] } });
    const afterDelete = await create(t, { name: 'After a delete', type: 'static' });
    const pastCap = await create(t, { name: 'One too many', type: 'static' });

    // Assess
    expect(made).toHaveLength(10);
    expect(attempts.filter((r) => r.status !== 201).map((r) => [r.status, r.body.error])).toEqual(Array(10).fill([400, 'segment_limit_reached']));
    expect(listed).toHaveLength(1000);
    expect(afterDelete.status).toBe(201);
    expect(pastCap.status).toBe(400);
  }, 120_000);
});

describe('GET /segments/{id}, PATCH, DELETE', () => {
  it('answers the same 404 for a non-UUID, a missing and a foreign id on every {id} route', async () => {
    // Prepare
    const t = await newTenant();
    const other = await newTenant();
    const foreign = (await create(other, { name: 'theirs', type: 'static' })).body.data.id;
    const routes = ['GET /segments/{id}', 'PATCH /segments/{id}', 'DELETE /segments/{id}', 'POST /segments/{id}/evaluate', 'GET /segments/{id}/usage', 'POST /segments/{id}/members', 'POST /segments/{id}/contacts'];

    for (const route of routes) {
      for (const id of ['not-a-uuid', randomUUID(), foreign]) {
        // Act
        const res = await invoke(route, { apiKey: t.apiKey, params: { id }, body: { action: 'add', contactIds: [randomUUID()] } });
        // Assess
        expect([route, res.status, res.body]).toEqual([route, 404, { error: 'not_found', message: 'Segment not found' }]);
      }
    }
    const removeRes = await invoke('DELETE /segments/{id}/contacts/{contactId}', { apiKey: t.apiKey, params: { id: foreign, contactId: randomUUID() } });
    expect(removeRes.status).toBe(404);
    expect((await invoke('GET /segments/{id}', { apiKey: other.apiKey, params: { id: foreign } })).status).toBe(200);
  });

  it('returns the detail with a page of contacts (limit, offset), newest first', async () => {
    const t = await newTenant();
    const seeded = await seedContacts(t.businessId, [0, 1, 2, 3, 4].map((d) => contact({ tags: ['vip'], created_at: daysAgoIso(d) })));
    const id = (await create(t, { name: 'VIPs', type: 'dynamic', rules: V3_VIP })).body.data.id;

    const res = await invoke('GET /segments/{id}', { apiKey: t.apiKey, params: { id }, query: { limit: '2', offset: '1' } });

    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id, contactCount: 5, pagination: { limit: 2, offset: 1, total: 5, hasMore: true } });
    expect(res.body.data.contacts.map((c: any) => c.id)).toEqual([seeded[1].id, seeded[2].id]);
    expect(res.body.data.contacts[0]).toMatchObject({ phone_number: seeded[1].phone_number, tags: ['vip'] });
    const bad = await invoke('GET /segments/{id}', { apiKey: t.apiKey, params: { id }, query: { limit: '0' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('Datos inválidos');
    const defaults = await invoke('GET /segments/{id}', { apiKey: t.apiKey, params: { id }, query: { limit: '', offset: '' } });
    expect(defaults.status).toBe(200);
    expect(defaults.body.data.pagination).toMatchObject({ offset: 0, total: 5 });
  });

  it('pages deep into a dynamic segment newest first, across shards and ties', async () => {
    // Prepare: 1,000 contacts, a third of them matching, created at 200 distinct instants (so ties share a second)
    const t = await newTenant();
    const seeded = await seedContacts(t.businessId, Array.from({ length: 1000 }, (_, i) => contact({ tags: i % 3 ? [] : ['vip'], created_at: daysAgoIso((i % 200) / 7) })), 8);
    const id = (await create(t, { name: 'VIPs', type: 'dynamic', rules: V3_VIP })).body.data.id;
    // Newest first by the second (what the projection keeps), then by id.
    const second = (c: { created_at: string }) => Math.floor(Date.parse(c.created_at) / 1000);
    const newestFirst = seeded.filter((c) => c.tags.includes('vip')).sort((a, b) => second(b) - second(a) || (a.id < b.id ? -1 : 1)).map((c) => c.id);

    // Act: a page past what a first read of every shard holds
    const res = await invoke('GET /segments/{id}', { apiKey: t.apiKey, params: { id }, query: { limit: '40', offset: '280' } });

    // Assess
    expect(res.status).toBe(200);
    expect(res.body.data.pagination).toEqual({ limit: 40, offset: 280, total: newestFirst.length, hasMore: true });
    expect(res.body.data.contacts.map((c: any) => c.id)).toEqual(newestFirst.slice(280, 320));
  });

  it('updates name, description, color and rules; a different type is ignored and flagged', async () => {
    const t = await newTenant();
    await seedContacts(t.businessId, [contact({ tags: ['vip'] }), contact({ tags: ['lead'] })]);
    const id = (await create(t, { name: 'A', type: 'dynamic', rules: V3_VIP })).body.data.id;

    const res = await invoke('PATCH /segments/{id}', { apiKey: t.apiKey, params: { id }, body: { name: 'B', description: 'd', color: '#000000', type: 'static', rules: { version: 3, filters: { tags: { any: ['lead', 'vip'] } } } } });

    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id, name: 'B', description: 'd', color: '#000000', type: 'dynamic', contactCount: 2, typeChangeIgnored: true });
    const same = await invoke('PATCH /segments/{id}', { apiKey: t.apiKey, params: { id }, body: { type: 'dynamic', name: 'C' } });
    expect(same.body.data.typeChangeIgnored).toBeUndefined();
    const invalid = await invoke('PATCH /segments/{id}', { apiKey: t.apiKey, params: { id }, body: { rules: { version: 3, filters: { tags: { any: [] } } } } });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error).toMatch(/Correct the rule and retry\.$/);
    const removed = await invoke('PATCH /segments/{id}', { apiKey: t.apiKey, params: { id }, body: { rules: null } });
    expect(removed.status).toBe(400);
    const staticId = (await create(t, { name: 'S', type: 'static' })).body.data.id;
    const v3OnStatic = await invoke('PATCH /segments/{id}', { apiKey: t.apiKey, params: { id: staticId }, body: { rules: V3_VIP } });
    expect(v3OnStatic.status).toBe(400);
    const legacyOnStatic = await invoke('PATCH /segments/{id}', { apiKey: t.apiKey, params: { id: staticId }, body: { rules: LEGACY_VIP, type: 'dynamic' } });
    expect(legacyOnStatic.status).toBe(200);
    expect(legacyOnStatic.body.data).toMatchObject({ type: 'static', rules: null, typeChangeIgnored: true });
    const unknownOnStatic = await invoke('PATCH /segments/{id}', { apiKey: t.apiKey, params: { id: staticId }, body: { rules: { version: 4, filters: {} } } });
    expect(unknownOnStatic.status).toBe(400);
    expect(unknownOnStatic.body.error).toMatch(/^Unknown rules version 4.*Correct the rule and retry\.$/);
  });

  it('refuses a PATCH body of null or an array with 400 and changes nothing; no body at all is an empty change', async () => {
    const t = await newTenant();
    const id = (await create(t, { name: 'A', type: 'dynamic', rules: V3_VIP })).body.data.id;
    const before = (await invoke('GET /segments/{id}', { apiKey: t.apiKey, params: { id } })).body.data;

    const refused = await Promise.all(['null', '[]', '[{"name":"B"}]'].map((rawBody) =>
      invoke('PATCH /segments/{id}', { apiKey: t.apiKey, params: { id }, headers: { 'content-type': 'application/json' }, rawBody })));
    const after = (await invoke('GET /segments/{id}', { apiKey: t.apiKey, params: { id } })).body.data;
    const empty = await invoke('PATCH /segments/{id}', { apiKey: t.apiKey, params: { id } });

    expect(refused.map((r) => r.status)).toEqual([400, 400, 400]);
    expect(refused[0].body).toEqual({ error: expect.any(String), details: expect.anything() });
    expect(after).toMatchObject({ name: 'A', updatedAt: before.updatedAt });
    expect(empty.status).toBe(200);
    expect(empty.body.data).toMatchObject({ name: 'A' });
  });

  it('deletes the segment and keeps its contacts', async () => {
    const t = await newTenant();
    const [c] = await seedContacts(t.businessId, [contact()]);
    const id = (await create(t, { name: 'S', type: 'static' })).body.data.id;
    await invoke('POST /segments/{id}/contacts', { apiKey: t.apiKey, params: { id }, body: { contactIds: [c.id] } });

    const res = await invoke('DELETE /segments/{id}', { apiKey: t.apiKey, params: { id } });

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, id });
    expect((await invoke('GET /segments/{id}', { apiKey: t.apiKey, params: { id } })).status).toBe(404);
    const again = await create(t, { name: 'S2', type: 'dynamic', rules: { version: 3, filters: { phone: c.phone_number } } });
    expect(again.body.data.contactCount).toBe(1);
  });
});

describe('bounds on segment rules', () => {
  const cond = (i: number, value = `v${i}`) => ({ field: 'custom_fields.f', operator: 'equals', value });
  const legacyV1 = (n: number, value?: string) => ({ operator: 'OR', conditions: Array.from({ length: n }, (_, i) => cond(i, value)) });
  const legacyV2 = (groups: number, perGroup: number) =>
    ({ version: 2, operator: 'OR', groups: Array.from({ length: groups }, () => ({ operator: 'AND', conditions: Array.from({ length: perGroup }, (_, i) => cond(i)) })) });
  const v3Custom = (n: number) => ({ version: 3, filters: { custom_fields: Object.fromEntries(Array.from({ length: n }, (_, i) => [`f${i}`, 'x'])) } });

  it.each([
    ['51 legacy conditions', legacyV1(51), /51 conditions; at most 50/],
    ['11 legacy v2 groups', legacyV2(11, 1), /11 groups; at most 10/],
    ['51 conditions over v2 groups', legacyV2(3, 17), /51 conditions; at most 50/],
    ['21 v3 custom-field entries', v3Custom(21), /21 custom fields; at most 20/],
    ['9,000 conditions', legacyV1(9000), /too large/],
    ['rules over 8 KB', legacyV1(45, 'x'.repeat(190)), /too large: \d+ bytes as JSON; at most 8192/],
  ])('refuses %s in create, update and preview with a rule error, storing nothing', async (_what, rules, message) => {
    // Prepare
    const t = await newTenant();
    const id = (await create(t, { name: 'A', type: 'dynamic', rules: V3_VIP })).body.data.id;

    // Act
    const created = await create(t, { name: 'Big', type: 'dynamic', rules });
    const updated = await invoke('PATCH /segments/{id}', { apiKey: t.apiKey, params: { id }, body: { rules } });
    const previewed = await invoke('POST /segments/preview', { apiKey: t.apiKey, body: { rules } });

    // Assess
    for (const res of [created, updated, previewed]) {
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(message);
      expect(res.body.error).toMatch(/Correct the rule and retry\.$/);
    }
    const stored = (await invoke('GET /segments', { apiKey: t.apiKey })).body.data;
    expect(stored.map((s: any) => [s.name, s.rules])).toEqual([['A', V3_VIP]]);
  });

  it('accepts rules at the bounds: 50 conditions, 10 groups, 20 custom-field entries', async () => {
    const t = await newTenant();
    for (const rules of [legacyV1(50), legacyV2(10, 5), v3Custom(20)]) {
      const res = await create(t, { name: 'At the bound', type: 'dynamic', rules });
      expect([res.status, res.body.error]).toEqual([201, undefined]);
    }
  });
});

describe('POST /segments/preview, evaluate, usage', () => {
  it('previews v1, v2 and v3 rules with a count and a sample, storing nothing', async () => {
    const t = await newTenant();
    await seedContacts(t.businessId, Array.from({ length: 12 }, (_, i) => contact({ tags: i % 2 ? ['vip'] : ['lead'], name: `C${i}` })));

    for (const rules of [V3_VIP, LEGACY_VIP, { version: 2, operator: 'AND', groups: [{ conditions: [{ field: 'tags', operator: 'contains', value: 'vip' }] }] }]) {
      const res = await invoke('POST /segments/preview', { apiKey: t.apiKey, body: { rules } });
      expect(res.status).toBe(200);
      expect(res.body.data.count).toBe(6);
      expect(res.body.data.preview).toHaveLength(6);
      expect(res.body.data.preview.every((c: any) => c.tags.includes('vip'))).toBe(true);
    }
    expect((await invoke('GET /segments', { apiKey: t.apiKey })).body.data).toEqual([]);
    const bad = await invoke('POST /segments/preview', { apiKey: t.apiKey, body: { rules: { version: 3, filters: { colour: 'red' } } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/unknown filter key.*Correct the rule and retry\.$/);
  });

  it('evaluate recomputes and stores the count; usage lists the broadcasts that target the segment, and no agents', async () => {
    const t = await newTenant();
    const id = (await create(t, { name: 'VIPs', type: 'dynamic', rules: V3_VIP })).body.data.id;
    await seedContacts(t.businessId, [contact({ tags: ['vip'] }), contact({ tags: ['vip'] })]);

    const res = await invoke('POST /segments/{id}/evaluate', { apiKey: t.apiKey, params: { id } });

    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id, contactCount: 2, evaluatedAt: expect.any(String) });
    const { getSegment } = await import('#shared/segments/repository.ts');
    expect((await getSegment(t.businessId, id))!.contactCount).toBe(2);
    const usage = await invoke('GET /segments/{id}/usage', { apiKey: t.apiKey, params: { id } });
    expect(usage.status).toBe(200);
    expect(usage.body).toEqual({ data: { segmentId: id, campaigns: [], agents: [] } });
    const sendAt = new Date(Date.now() + 86_400_000).toISOString();
    const broadcast = await invoke('POST /broadcasts/v1', { apiKey: t.apiKey, body: { name: 'Black Friday', templateName: 'hello_world', language: 'en_US', segment_id: id, send_at: sendAt } });
    expect(broadcast.status).toBe(201);
    const used = await invoke('GET /segments/{id}/usage', { apiKey: t.apiKey, params: { id } });
    expect(used.body).toEqual({ data: { segmentId: id, campaigns: [{ id: broadcast.body.data.id, name: 'Black Friday', status: 'scheduled', usedAt: broadcast.body.data.created_at }], agents: [] } });
  });

  it('requires contacts:read to read and contacts:write to change', async () => {
    const reader = await newTenant(['contacts:read']);
    expect((await invoke('GET /segments', { apiKey: reader.apiKey })).status).toBe(200);
    const res = await create(reader, { name: 'x', type: 'static' });
    expect(res.status).toBe(403);
  });
});
