import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { invoke, newTenant } from '../../support/api.ts';
import { createApiKey } from '#shared/auth/api-keys.ts';
import { db, table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';
import { eventSink } from '../../support/queues.ts';

// The events these tests look for are the messages the SQS stand-in received.
const { eventsOf } = eventSink();

const stageItems = async (businessId: string) => {
  const { pk, skPrefix } = keys.stagePrefix(businessId);
  const out = await db.send(new QueryCommand({ TableName: table(), KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)', ExpressionAttributeValues: { ':pk': pk, ':p': skPrefix }, ConsistentRead: true }));
  return out.Items ?? [];
};

const create = (apiKey: string, body: object) => invoke('POST /funnel/v1/stages', { apiKey, body });

describe('funnel stages', () => {
  it('creates with defaults (201), appends, inserts at a position shifting the others, and lists by position', async () => {
    // Prepare
    const t = await newTenant();

    // Act
    const a = await create(t.apiKey, { name: 'Lead' });
    const b = await create(t.apiKey, { name: 'Won', color: '#22C55E' });
    const c = await create(t.apiKey, { name: 'Qualified', position: 1 });
    const first = await create(t.apiKey, { name: 'New', position: 0 });
    const list = await invoke('GET /funnel/v1/stages', { apiKey: t.apiKey });

    // Assess
    expect(a.status).toBe(201);
    expect(a.body.stage).toEqual({ id: expect.any(String), name: 'Lead', position: 0, color: '#6366f1', contact_count: 0, created_at: expect.any(String), updated_at: expect.any(String) });
    expect(b.body.stage).toMatchObject({ position: 1, color: '#22C55E' });
    expect(c.body.stage.position).toBe(1);
    expect(first.body.stage.position).toBe(0);
    expect(list.status).toBe(200);
    expect(list.body.stages.map((s: any) => [s.name, s.position])).toEqual([['New', 0], ['Lead', 1], ['Qualified', 2], ['Won', 3]]);
    const created = eventsOf(t.businessId, 'funnel_stage.created').find((e) => e.data.stage_id === b.body.stage.id);
    expect(created.data).toEqual({ stage_id: b.body.stage.id, name: 'Won', position: 1, color: '#22C55E', created_at: b.body.stage.created_at });
  });

  it.each([
    [{}, 'name'],
    [{ name: '' }, 'name'],
    [{ name: 'x'.repeat(101) }, 'name'],
    [{ name: '😀'.repeat(101) }, 'name'],
    [{ name: 'ok', color: 'red' }, 'color'],
    [{ name: 'ok', color: '#12345' }, 'color'],
    [{ name: 'ok', position: -1 }, 'position'],
    [{ name: 'ok', position: 1.5 }, 'position'],
  ])('answers 400 validation_error with details for %j', async (body, field) => {
    const t = await newTenant();
    const res = await create(t.apiKey, body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'validation_error', message: expect.any(String), details: { [field]: [expect.any(String)] } });
  });

  it('lists the stages with a consistent read, so a stage just created shows in the list that follows (DynamoDB reads eventually consistent by default)', async () => {
    const { dynamo } = await import('#shared/store/client.ts');
    const { countCalls, measure } = await import('../../support/dynamo-calls.ts');
    countCalls(dynamo);
    const t = await newTenant(['funnels:read', 'funnels:write']);
    expect((await invoke('POST /funnel/v1/stages', { apiKey: t.apiKey, body: { name: 'Nuevo' } })).status).toBe(201);

    const { result, calls } = await measure(() => invoke('GET /funnel/v1/stages', { apiKey: t.apiKey }));

    expect(result.body.stages.map((s: any) => s.name)).toEqual(['Nuevo']);
    const stageReads = calls.filter((c) => c.command === 'QueryCommand' && String(c.input.ExpressionAttributeValues?.[':p']?.S ?? JSON.stringify(c.input)).includes('STAGE'));
    expect(stageReads.length).toBeGreaterThan(0);
    expect(stageReads.every((c) => c.input.ConsistentRead === true)).toBe(true);
  });

  it('counts a name\'s characters as the contract does: 100 emoji fit (each is one character, two UTF-16 units)', async () => {
    const t = await newTenant();
    const res = await create(t.apiKey, { name: '😀'.repeat(100) });
    expect(res.status).toBe(201);
    expect(res.body.stage.name).toBe('😀'.repeat(100));
  });

  it('refuses the 51st stage with stage_limit_reached', async () => {
    const t = await newTenant();
    const k2 = (await createApiKey(t.businessId, ['funnels:write'])).apiKey;
    for (let i = 0; i < 50; i++) expect((await create(i < 40 ? t.apiKey : k2, { name: `S${i}` })).status).toBe(201);
    const res = await create(k2, { name: 'one too many' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'stage_limit_reached', message: expect.any(String) });
    // Deleting a stage frees its slot
    const first = (await invoke('GET /funnel/v1/stages', { apiKey: t.apiKey })).body.stages[0];
    expect((await invoke('DELETE /funnel/v1/stages/{id}', { apiKey: k2, params: { id: first.id } })).status).toBe(200);
    expect((await create(k2, { name: 'fits again' })).status).toBe(201);
  });

  it('gets one stage, updates only the sent fields and emits funnel_stage.updated', async () => {
    const t = await newTenant();
    const s = (await create(t.apiKey, { name: 'Lead', color: '#111111' })).body.stage;

    const res = await invoke('PATCH /funnel/v1/stages/{id}', { apiKey: t.apiKey, params: { id: s.id }, body: { name: 'Hot lead' } });
    const got = await invoke('GET /funnel/v1/stages/{id}', { apiKey: t.apiKey, params: { id: s.id } });

    expect(res.status).toBe(200);
    expect(res.body.stage).toMatchObject({ id: s.id, name: 'Hot lead', color: '#111111', position: 0 });
    expect(got.status).toBe(200);
    expect(got.body.stage).toEqual(res.body.stage);
    const ev = eventsOf(t.businessId, 'funnel_stage.updated');
    expect(ev.map((e) => e.data)).toEqual([{ stage_id: s.id, name: 'Hot lead', color: '#111111', updated_at: res.body.stage.updated_at }]);
    const bad = await invoke('PATCH /funnel/v1/stages/{id}', { apiKey: t.apiKey, params: { id: s.id }, body: { color: 'blue' } });
    expect(bad.status).toBe(400);
    expect(bad.body.details.color).toEqual([expect.any(String)]);
  });

  it('answers 404 not_found for unknown and malformed stage ids, 403 forbidden for another account\'s', async () => {
    const t = await newTenant();
    const other = await newTenant();
    const foreign = (await create(other.apiKey, { name: 'theirs' })).body.stage.id;
    // The contract's Authentication section: 403 when "the resource belongs to another account".
    expect((await invoke('GET /funnel/v1/stages/{id}', { apiKey: t.apiKey, params: { id: foreign } })).body.error).toBe('forbidden');
    expect((await invoke('PATCH /funnel/v1/stages/{id}', { apiKey: t.apiKey, params: { id: foreign }, body: { name: 'x' } })).status).toBe(403);
    expect((await invoke('DELETE /funnel/v1/stages/{id}', { apiKey: t.apiKey, params: { id: foreign } })).status).toBe(403);
    for (const id of ['nope', '00000000-0000-4000-8000-000000000000']) {
      expect((await invoke('GET /funnel/v1/stages/{id}', { apiKey: t.apiKey, params: { id } })).body.error).toBe('not_found');
      expect((await invoke('PATCH /funnel/v1/stages/{id}', { apiKey: t.apiKey, params: { id }, body: { name: 'x' } })).status).toBe(404);
      expect((await invoke('DELETE /funnel/v1/stages/{id}', { apiKey: t.apiKey, params: { id } })).status).toBe(404);
    }
  });

  it('reorders: listed first in order, unlisted keep their relative order; unknown ids give 404 invalid_ids, another account\'s 403', async () => {
    const t = await newTenant();
    const ids: string[] = [];
    for (const name of ['A', 'B', 'C', 'D']) ids.push((await create(t.apiKey, { name })).body.stage.id);
    const unknown = '00000000-0000-4000-8000-000000000000';

    const res = await invoke('PATCH /funnel/v1/stages/reorder', { apiKey: t.apiKey, body: { stage_ids: [ids[3], ids[1]] } });
    const bad = await invoke('PATCH /funnel/v1/stages/reorder', { apiKey: t.apiKey, body: { stage_ids: [ids[0], unknown] } });
    const dup = await invoke('PATCH /funnel/v1/stages/reorder', { apiKey: t.apiKey, body: { stage_ids: [ids[0], ids[0]] } });
    const missing = await invoke('PATCH /funnel/v1/stages/reorder', { apiKey: t.apiKey, body: {} });
    const other = await newTenant();
    const theirs = (await create(other.apiKey, { name: 'Theirs' })).body.stage.id;
    const foreign = await invoke('PATCH /funnel/v1/stages/reorder', { apiKey: t.apiKey, body: { stage_ids: [ids[0], theirs] } });

    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.stages.map((s: any) => [s.name, s.position])).toEqual([['D', 0], ['B', 1], ['A', 2], ['C', 3]]);
    expect(bad.status).toBe(404);
    expect(bad.body).toEqual({ error: 'not_found', message: expect.any(String), invalid_ids: [unknown] });
    // Another account's stage: 403, as for every other resource (contract, Authentication).
    expect(foreign.status).toBe(403);
    expect(foreign.body).toEqual({ error: 'forbidden', message: expect.any(String) });
    expect(dup.status).toBe(400);
    expect(missing.status).toBe(400);
    expect(missing.body.details.stage_ids).toBeDefined();
    const ev = eventsOf(t.businessId, 'funnel_stages.reordered');
    expect(ev.map((e) => e.data)).toEqual([{ stage_ids: [ids[3], ids[1], ids[0], ids[2]], reordered_at: expect.any(String) }]);
    const list = (await invoke('GET /funnel/v1/stages', { apiKey: t.apiKey })).body.stages;
    expect(list.map((s: any) => s.name)).toEqual(['D', 'B', 'A', 'C']);
  });

  it('deletes only an empty stage, closes the gap and emits funnel_stage.deleted', async () => {
    const t = await newTenant();
    const a = (await create(t.apiKey, { name: 'A' })).body.stage;
    const b = (await create(t.apiKey, { name: 'B' })).body.stage;
    await create(t.apiKey, { name: 'C' });
    const contact = (await invoke('POST /contacts/v1', { apiKey: t.apiKey, body: { phone_number: '+14155550501' } })).body.contact;
    await invoke('POST /funnel/v1/contacts/{id}/move', { apiKey: t.apiKey, params: { id: contact.id }, body: { stage_id: b.id } });

    const refused = await invoke('DELETE /funnel/v1/stages/{id}', { apiKey: t.apiKey, params: { id: b.id } });
    const ok = await invoke('DELETE /funnel/v1/stages/{id}', { apiKey: t.apiKey, params: { id: a.id } });

    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({ error: 'stage_not_empty', message: expect.any(String), contact_count: 1 });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ success: true, id: a.id });
    const list = (await invoke('GET /funnel/v1/stages', { apiKey: t.apiKey })).body.stages;
    expect(list.map((s: any) => [s.name, s.position, s.contact_count])).toEqual([['B', 0, 1], ['C', 1, 0]]);
    expect(eventsOf(t.businessId, 'funnel_stage.deleted').map((e) => e.data)).toEqual([{ stage_id: a.id, name: 'A', deleted_at: expect.any(String) }]);
  });

  it('requires funnels:read / funnels:write', async () => {
    const t = await newTenant(['funnels:read']);
    expect((await invoke('GET /funnel/v1/stages', { apiKey: t.apiKey })).status).toBe(200);
    const res = await create(t.apiKey, { name: 'x' });
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('forbidden');
  });
});

describe('funnel invariants under concurrency', () => {
  it('keeps positions a permutation under 50 concurrent inserts and reorders', async () => {
    // Prepare: 10 stages, and enough keys that the per-key limit does not shape the race
    const t = await newTenant();
    const apiKeys = await Promise.all([0, 1, 2].map(() => createApiKey(t.businessId, ['funnels:write', 'funnels:read']).then((k) => k.apiKey)));
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push((await create(apiKeys[0], { name: `base${i}` })).body.stage.id);

    // Act: 30 inserts at random positions and 20 reorders of random subsets, all at once
    const reqs = Array.from({ length: 50 }, (_, i) => {
      const apiKey = apiKeys[i % 3];
      if (i % 5 < 3) return create(apiKey, { name: `new${i}`, position: i % 7 });
      const subset = [...ids].sort(() => Math.random() - 0.5).slice(0, 4);
      return invoke('PATCH /funnel/v1/stages/reorder', { apiKey, body: { stage_ids: subset } });
    });
    const results = await Promise.all(reqs);

    // Assess: no failure but a 409 `conflict` (a request that kept losing races past its retry budget: the client
    // retries it); the table holds every created stage, each in its own slot, listed at positions 0..n-1
    expect(results.filter((r) => r.status >= 300 && r.status !== 409).map((r) => [r.status, r.body])).toEqual([]);
    expect(results.filter((r) => r.status === 409).every((r) => r.body.error === 'conflict')).toBe(true);
    const created = results.filter((r) => r.status === 201).length;
    const items = await stageItems(t.businessId);
    expect(items).toHaveLength(10 + created);
    expect(new Set(items.map((i) => i.slot)).size).toBe(items.length);
    const slots = (await db.send(new QueryCommand({ TableName: table(), KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)', ExpressionAttributeValues: { ':pk': keys.stagePrefix(t.businessId).pk, ':p': 'FSLOT#' }, ConsistentRead: true }))).Items!;
    expect(slots.map((s) => s.stageId).sort()).toEqual(items.map((i) => i.id).sort());
    const listed = (await invoke('GET /funnel/v1/stages', { apiKey: apiKeys[1] })).body.stages;
    expect(listed.map((s: any) => s.position)).toEqual(Array.from({ length: items.length }, (_, i) => i));
    const byRank = [...items].sort((a, b) => a.rank - b.rank || (a.id < b.id ? -1 : 1)).map((i) => i.id);
    expect(listed.map((s: any) => s.id)).toEqual(byRank);
  });
});
