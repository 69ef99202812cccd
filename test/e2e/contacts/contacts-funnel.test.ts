/**
 * Contacts, the funnel and bulk operations through the local stack over HTTP: every row of the contract's
 * funnel and bulk tables, their errors, their events as a webhook receiver gets them, and the invariants
 * after 50+ simultaneous requests, checked in the table itself.
 */
import type { LocalStack } from '#infra/local/stack.ts';
import { callWith, startReceiver } from '../../support/http.ts';
import { waitFor } from '../../support/wait.ts';
import { overrideEnv } from '../../support/env.ts';

const ENV = { LIMIT_REQUESTS_PER_MINUTE: '100000' };
const restoreEnv = overrideEnv(ENV);

let stack: LocalStack;
let key: string;
let businessId: string;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
const received: { event: string; data: any }[] = [];
let queryTable: (prefix: string, bid?: string) => Promise<Record<string, any>[]>;
let getItem: (sk: string, bid?: string) => Promise<Record<string, any> | undefined>;
let newKey: (scopes?: string[], bid?: string) => Promise<string>;
let newTenant: () => Promise<{ businessId: string; apiKey: string }>;

beforeAll(async () => {
  const { startTestStack } = await import('../../support/stack.ts');
  stack = await startTestStack({ demo: true, queueRetryDelayMs: 200 });
  key = stack.demo!.apiKey;
  businessId = stack.demo!.businessId;
  const { db, table } = await import('#shared/store/client.ts');
  const { QueryCommand, GetCommand } = await import('@aws-sdk/lib-dynamodb');
  queryTable = async (prefix, bid = businessId) => {
    const out: Record<string, any>[] = [];
    let ExclusiveStartKey: Record<string, any> | undefined;
    do {
      const page = await db.send(new QueryCommand({ TableName: table(), KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)', ExpressionAttributeValues: { ':pk': prefix === 'CONTACT#' ? `B#${bid}` : `B#${bid}#FUNNEL`, ':p': prefix }, ConsistentRead: true, ExclusiveStartKey }));
      out.push(...(page.Items ?? []));
      ExclusiveStartKey = page.LastEvaluatedKey;
    } while (ExclusiveStartKey);
    return out;
  };
  getItem = async (sk, bid = businessId) => (await db.send(new GetCommand({ TableName: table(), Key: { pk: `B#${bid}`, sk }, ConsistentRead: true }))).Item;
  const { createApiKey } = await import('#shared/auth/api-keys.ts');
  newKey = async (scopes = ['contacts:write', 'contacts:read', 'funnels:write', 'funnels:read'], bid = businessId) => (await createApiKey(bid, scopes as any)).apiKey;
  const { createBusiness } = await import('#shared/business/repository.ts');
  newTenant = async () => {
    const b = await createBusiness(`Funnel test ${seq++}`);
    return { businessId: b.businessId, apiKey: await newKey(['contacts:write', 'contacts:read', 'funnels:write', 'funnels:read'], b.businessId) };
  };

  receiver = await startReceiver({ events: received });
  const hook = await api('POST', '/user-webhooks', { name: 'crm events', url: receiver.url, events: ['*'] });
  expect(hook.status).toBe(201);
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  await receiver?.stop();
  restoreEnv();
});

const api = (method: string, path: string, body?: unknown, apiKey = key) => callWith(stack.url, apiKey)(method, path, body);

/** Rate windows are per clock minute: start a limit test where the minute will not end under it. */
const clearOfMinuteEnd = async () => {
  const s = new Date().getUTCSeconds();
  if (s >= 45) await new Promise((r) => setTimeout(r, (61 - s) * 1000));
};

let seq = Math.floor(Math.random() * 1e5);
const phone = () => `+1646${String(++seq).padStart(7, '0')}`;


const eventWhere = (event: string, pred: (data: any) => boolean) =>
  waitFor(event, () => received.find((e) => e.event === event && pred(e.data)), 15_000, 100);

describe('funnel stages over HTTP', () => {
  it('creates, lists, gets, updates, reorders, moves and deletes as the contract says, with every funnel event', async () => {
    // Create: 201, default colour, appended; insert at 0 shifts the others
    const lead = await api('POST', '/funnel/v1/stages', { name: 'Lead' });
    expect(lead.status).toBe(201);
    expect(lead.body.stage).toEqual({ id: expect.any(String), name: 'Lead', position: 0, color: '#6366f1', contact_count: 0, created_at: expect.any(String), updated_at: expect.any(String) });
    const won = (await api('POST', '/funnel/v1/stages', { name: 'Won', color: '#10b981' })).body.stage;
    const fresh = (await api('POST', '/funnel/v1/stages', { name: 'Fresh', position: 0 })).body.stage;
    expect(fresh.position).toBe(0);
    const list = await api('GET', '/funnel/v1/stages');
    expect(list.status).toBe(200);
    expect(list.body.stages.map((s: any) => [s.name, s.position])).toEqual([['Fresh', 0], ['Lead', 1], ['Won', 2]]);

    // Get and update (only sent fields)
    const got = await api('GET', `/funnel/v1/stages/${won.id}`);
    expect(got.status).toBe(200);
    expect(got.body.stage).toMatchObject({ id: won.id, name: 'Won', position: 2 });
    const upd = await api('PATCH', `/funnel/v1/stages/${won.id}`, { color: '#000000' });
    expect(upd.status).toBe(200);
    expect(upd.body.stage).toMatchObject({ name: 'Won', color: '#000000' });

    // Reorder: listed first, the others keep their relative order
    const re = await api('PATCH', '/funnel/v1/stages/reorder', { stage_ids: [won.id] });
    expect(re.status).toBe(200);
    expect(re.body.success).toBe(true);
    expect(re.body.stages.map((s: any) => [s.name, s.position])).toEqual([['Won', 0], ['Fresh', 1], ['Lead', 2]]);

    // Move a contact in, then try to delete its stage
    const contact = (await api('POST', '/contacts/v1', { phone_number: phone(), name: 'Mover' })).body.contact;
    const moved = await api('POST', `/funnel/v1/contacts/${contact.id}/move`, { stage_id: lead.body.stage.id });
    expect(moved.status).toBe(200);
    expect(moved.body).toEqual({ contact_id: contact.id, previous_stage: null, new_stage: { id: lead.body.stage.id, name: 'Lead' }, moved_at: expect.any(String) });
    const refused = await api('DELETE', `/funnel/v1/stages/${lead.body.stage.id}`);
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({ error: 'stage_not_empty', message: expect.any(String), contact_count: 1 });
    const out = await api('POST', `/funnel/v1/contacts/${contact.id}/move`, { stage_id: null });
    expect(out.body).toMatchObject({ previous_stage: { id: lead.body.stage.id, name: 'Lead' }, new_stage: null });
    const del = await api('DELETE', `/funnel/v1/stages/${lead.body.stage.id}`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ success: true, id: lead.body.stage.id });

    // Events, as a subscriber receives them
    expect((await eventWhere('funnel_stage.created', (d) => d.stage_id === won.id)).data).toEqual({ stage_id: won.id, name: 'Won', position: 1, color: '#10b981', created_at: won.created_at });
    expect((await eventWhere('funnel_stage.updated', (d) => d.stage_id === won.id)).data).toEqual({ stage_id: won.id, name: 'Won', color: '#000000', updated_at: upd.body.stage.updated_at });
    expect((await eventWhere('funnel_stages.reordered', (d) => d.stage_ids[0] === won.id)).data).toEqual({ stage_ids: [won.id, fresh.id, lead.body.stage.id], reordered_at: expect.any(String) });
    expect((await eventWhere('contact.stage_changed', (d) => d.contact_id === contact.id && d.new_stage_id !== null)).data).toEqual({
      contact_id: contact.id,
      phone_number: contact.phone_number,
      previous_stage_id: null,
      previous_stage_name: null,
      new_stage_id: lead.body.stage.id,
      new_stage_name: 'Lead',
      moved_at: moved.body.moved_at,
    });
    expect((await eventWhere('funnel_stage.deleted', (d) => d.stage_id === lead.body.stage.id)).data).toEqual({ stage_id: lead.body.stage.id, name: 'Lead', deleted_at: expect.any(String) });
  }, 60_000);

  it('answers the listed errors: validation_error with details, not_found (stage, contact, invalid_ids), stage_limit_reached', async () => {
    const t = await newTenant();
    const call = (m: string, p: string, body?: unknown) => api(m, p, body, t.apiKey);
    const bad = await call('POST', '/funnel/v1/stages', { name: '', color: 'green' });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: 'validation_error', message: expect.any(String), details: { name: [expect.any(String)], color: [expect.any(String)] } });
    const unknown = '00000000-0000-4000-8000-000000000000';
    expect((await call('GET', `/funnel/v1/stages/${unknown}`)).body).toEqual({ error: 'not_found', message: expect.any(String) });
    const re = await call('PATCH', '/funnel/v1/stages/reorder', { stage_ids: [unknown] });
    expect(re.status).toBe(404);
    expect(re.body.invalid_ids).toEqual([unknown]);
    const contact = (await call('POST', '/contacts/v1', { phone_number: phone() })).body.contact;
    const noStage = await call('POST', `/funnel/v1/contacts/${contact.id}/move`, { stage_id: unknown });
    const noContact = await call('POST', `/funnel/v1/contacts/${unknown}/move`, { stage_id: null });
    expect([noStage.status, noStage.body.message]).toEqual([404, 'Funnel stage not found']);
    expect([noContact.status, noContact.body.message]).toEqual([404, 'Contact not found']);

    // 50 stages at once: a permutation of positions in the table; the 51st is refused
    // (a create that keeps losing races past its retry budget answers 409 conflict; it is sent again)
    const created = await Promise.all(Array.from({ length: 50 }, (_, i) => call('POST', '/funnel/v1/stages', { name: `S${i}`, position: i % 5 })));
    expect(created.map((r) => r.status).filter((s) => s !== 201 && s !== 409)).toEqual([]);
    for (const [i, r] of created.entries()) {
      if (r.status === 409) expect((await call('POST', '/funnel/v1/stages', { name: `S${i}` })).status).toBe(201);
    }
    const stageItems = await queryTable('STAGE#', t.businessId);
    const slots = await queryTable('FSLOT#', t.businessId);
    expect(stageItems).toHaveLength(50);
    expect(slots.map((s) => s.stageId).sort()).toEqual(stageItems.map((s) => s.id).sort());
    const listed = (await call('GET', '/funnel/v1/stages')).body.stages;
    expect(listed.map((s: any) => s.position)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    expect(new Set(listed.map((s: any) => s.id)).size).toBe(50);
    const over = await call('POST', '/funnel/v1/stages', { name: 'one too many' });
    expect(over.status).toBe(400);
    expect(over.body).toEqual({ error: 'stage_limit_reached', message: expect.any(String) });
  }, 90_000);

  it('keeps one stage per contact and exact counts after 60 simultaneous moves', async () => {
    const t = await newTenant();
    const call = (m: string, p: string, body?: unknown) => api(m, p, body, t.apiKey);
    const stages = [];
    for (const name of ['A', 'B', 'C']) stages.push((await call('POST', '/funnel/v1/stages', { name })).body.stage.id);
    const created = await call('POST', '/contacts/v1/bulk', { operation: 'create', contacts: Array.from({ length: 12 }, () => ({ phone_number: phone() })) });
    const ids: string[] = created.body.results.map((r: any) => r.contact_id);
    const targets = [...stages, null];

    const results = await Promise.all(Array.from({ length: 60 }, (_, i) =>
      call('POST', `/funnel/v1/contacts/${ids[i % ids.length]}/move`, { stage_id: targets[(i * 7) % targets.length] })));

    expect(results.map((r) => r.status).filter((s) => s !== 200)).toEqual([]);
    const contacts = await queryTable('CONTACT#', t.businessId);
    for (const s of await queryTable('STAGE#', t.businessId)) {
      expect([s.name, s.contact_count]).toEqual([s.name, contacts.filter((c) => c.funnel_stage_id === s.id && !c.deleted_at).length]);
    }
    const listed = (await call('GET', '/funnel/v1/stages')).body.stages;
    expect(listed.reduce((n: number, s: any) => n + s.contact_count, 0)).toBe(contacts.filter((c) => c.funnel_stage_id && !c.deleted_at).length);
  }, 60_000);
});

describe('contacts and bulk over HTTP', () => {
  it('creates, reads, searches, updates and soft-deletes a contact, with its events', async () => {
    const number = phone();
    const created = await api('POST', '/contacts/v1', { phone_number: number, name: 'Zoë Q', email: 'zoe@q.io', tags: ['a', 'a'] });
    expect(created.status).toBe(201);
    const c = created.body.contact;
    expect(c).toMatchObject({ phone_number: number, name: 'Zoë Q', tags: ['a'] });
    const dup = await api('POST', '/contacts/v1', { phone_number: number });
    expect(dup.status).toBe(409);
    expect(dup.body).toEqual({ error: 'duplicate_contact', message: expect.any(String), existing_contact_id: c.id });
    const found = await api('GET', `/contacts/v1?search=zoe&filters=${encodeURIComponent(JSON.stringify({ tags: { all: ['a'] } }))}`);
    expect(found.body.contacts.map((x: any) => x.id)).toEqual([c.id]);
    const upd = await api('PATCH', `/contacts/v1/${c.id}`, { name: 'Zoë R' });
    expect(upd.body.contact.name).toBe('Zoë R');
    expect((await api('DELETE', `/contacts/v1/${c.id}`)).body).toEqual({ success: true, id: c.id });
    expect((await api('GET', `/contacts/v1/${c.id}`)).status).toBe(404);

    expect((await eventWhere('contact.created', (d) => d.contact_id === c.id)).data).toMatchObject({ phone_number: number, created_at: c.created_at });
    expect((await eventWhere('contact.updated', (d) => d.contact_id === c.id)).data).toMatchObject({ changed_fields: ['name'] });
    expect((await eventWhere('contact.deleted', (d) => d.contact_id === c.id)).data).toMatchObject({ phone_number: number });
  }, 30_000);

  it('runs the six bulk operations with 200, 207 and the per-item errors, and limits bulk requests to 10 per minute', async () => {
    await clearOfMinuteEnd();
    const k = await newKey();
    const existing = (await api('POST', '/contacts/v1', { phone_number: phone() })).body.contact;
    const stage = (await api('POST', '/funnel/v1/stages', { name: `Bulk ${seq}` })).body.stage;
    const unknown = '00000000-0000-4000-8000-000000000000';

    const create = await api('POST', '/contacts/v1/bulk', {
      operation: 'create',
      contacts: [{ phone_number: phone(), name: 'One' }, { phone_number: phone(), tags: ['t'] }, { phone_number: existing.phone_number }, { phone_number: 'nope' }, { phone_number: phone(), email: 'bad' }],
    }, k);
    expect(create.status).toBe(207);
    expect(create.body).toMatchObject({ operation: 'create', success_count: 2, error_count: 3 });
    expect(create.body.results.map((r: any) => r.error ?? 'ok')).toEqual(['ok', 'ok', 'duplicate_contact', 'invalid_phone_number', 'create_failed']);
    expect(create.body.results[2].existing_contact_id).toBe(existing.id);
    expect(create.body.results[0]).toEqual({ success: true, contact_id: expect.any(String), phone_number: expect.any(String) });
    const ids = create.body.results.slice(0, 2).map((r: any) => r.contact_id);

    const update = await api('POST', '/contacts/v1/bulk', { operation: 'update', contacts: [{ id: ids[0], add_tags: ['u'], custom_fields: { k: 1 } }, { id: ids[1], email: 'bad' }] }, k);
    expect(update.status).toBe(207);
    expect(update.body.results.map((r: any) => r.error ?? 'ok')).toEqual(['ok', 'update_failed']);
    const add = await api('POST', '/contacts/v1/bulk', { operation: 'add_tags', contact_ids: ids, tags: ['x'] }, k);
    expect([add.status, add.body.success_count]).toEqual([200, 2]);
    const remove = await api('POST', '/contacts/v1/bulk', { operation: 'remove_tags', contact_ids: [...ids, unknown], tags: ['x'] }, k);
    expect([remove.status, remove.body.results[2].error]).toEqual([207, 'not_found']);
    const set = await api('POST', '/contacts/v1/bulk', { operation: 'set_funnel_stage', contact_ids: ids, funnel_stage_id: stage.id }, k);
    expect([set.status, set.body.success_count]).toEqual([200, 2]);
    expect((await api('GET', `/funnel/v1/stages/${stage.id}`)).body.stage.contact_count).toBe(2);
    const del = await api('POST', '/contacts/v1/bulk', { operation: 'delete', contact_ids: ids }, k);
    expect([del.status, del.body.success_count]).toEqual([200, 2]);
    expect((await api('GET', `/funnel/v1/stages/${stage.id}`)).body.stage.contact_count).toBe(0);
    const tooMany = await api('POST', '/contacts/v1/bulk', { operation: 'delete', contact_ids: Array.from({ length: 101 }, () => unknown) }, k);
    expect([tooMany.status, tooMany.body.error]).toEqual([400, 'validation_error']);
    const got = await api('GET', `/contacts/v1/${ids[0]}`);
    expect(got.status).toBe(404);

    // Per-contact events as for single operations
    await eventWhere('contact.created', (d) => d.contact_id === ids[1]);
    await eventWhere('contact.stage_changed', (d) => d.contact_id === ids[1] && d.new_stage_id === stage.id);
    await eventWhere('contact.deleted', (d) => d.contact_id === ids[1]);

    // 7 bulk requests so far on this key (the refused one counts too): the 11th within the minute is refused
    const more = [];
    for (let i = 0; i < 4; i++) more.push((await api('POST', '/contacts/v1/bulk', { operation: 'delete', contact_ids: [unknown] }, k)).status);
    expect(more).toEqual([207, 207, 207, 429]);
  }, 60_000);

  it('creates one contact under 50 simultaneous creates of one number', async () => {
    const number = phone();
    const results = await Promise.all(Array.from({ length: 50 }, () => api('POST', '/contacts/v1', { phone_number: number })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(49);
    const contacts = (await queryTable('CONTACT#')).filter((c) => c.phone_number === number);
    expect(contacts).toHaveLength(1);
    expect((await getItem(`CPHONE#${number}`))!.contactId).toBe(contacts[0].id);
  }, 60_000);
});
