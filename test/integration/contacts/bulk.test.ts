import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { invoke, newTenant } from '../../support/api.ts';
import { createApiKey } from '#shared/auth/api-keys.ts';
import { addAgent } from '#shared/team/repository.ts';
import { findOrCreateConversation } from '#shared/conversations/repository.ts';
import { getContact } from '#shared/contacts/repository.ts';
import { keys } from '#shared/store/keys.ts';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { eventSink } from '../../support/queues.ts';

// The events these tests look for are the messages the SQS stand-in received.
const { eventsOf } = eventSink();

const queryPrefix = async (businessId: string, prefix: string) => {
  const out = await db.send(new QueryCommand({ TableName: table(), KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)', ExpressionAttributeValues: { ':pk': `B#${businessId}`, ':p': prefix }, ConsistentRead: true }));
  return out.Items ?? [];
};

/** Rate windows are per clock minute: start a limit test where the minute will not end under it. */
const clearOfMinuteEnd = async () => {
  const s = new Date().getUTCSeconds();
  if (s >= 45) await new Promise((r) => setTimeout(r, (61 - s) * 1000));
};

const bulk = (apiKey: string, body: object) => invoke('POST /contacts/v1/bulk', { apiKey, body });
const phones = (n: number, base = 4155551000) => Array.from({ length: n }, (_, i) => `+1${base + i}`);

describe('POST /contacts/v1/bulk', () => {
  it('creates 100 contacts (200), one contact.created each, with contact_id and phone_number per result', async () => {
    // Prepare
    const t = await newTenant();

    // Act
    const res = await bulk(t.apiKey, { operation: 'create', contacts: phones(100).map((phone_number, i) => ({ phone_number, name: `C${i}`, tags: ['imported'] })) });

    // Assess
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ operation: 'create', success_count: 100, error_count: 0 });
    expect(res.body.results[7]).toEqual({ success: true, contact_id: expect.any(String), phone_number: '+14155551007' });
    const items = await queryPrefix(t.businessId, 'CONTACT#');
    expect(items).toHaveLength(100);
    expect(items.every((i) => i.origin === 'bulk' && typeof i.proj === 'string')).toBe(true);
    expect(eventsOf(t.businessId, 'contact.created')).toHaveLength(100);
  });

  it('answers 207 with per-item errors: duplicate_contact (existing and in-request), invalid_phone_number', async () => {
    const t = await newTenant();
    const existing = (await invoke('POST /contacts/v1', { apiKey: t.apiKey, body: { phone_number: '+14155552000' } })).body.contact;

    const res = await bulk(t.apiKey, {
      operation: 'create',
      contacts: [{ phone_number: '+14155552000' }, { phone_number: '+14155552001' }, { phone_number: '+1 415 555 2001' }, { phone_number: 'garbage' }, { name: 'no phone' }, { phone_number: '14155552002' }, { phone_number: 14155552003 }],
    });

    expect(res.status).toBe(207);
    expect(res.body).toMatchObject({ operation: 'create', success_count: 1, error_count: 6 });
    const [dup, ok, dupInRequest, bad, none, national, numeric] = res.body.results;
    expect(dup).toMatchObject({ success: false, error: 'duplicate_contact', existing_contact_id: existing.id, phone_number: '+14155552000' });
    expect(ok).toMatchObject({ success: true, phone_number: '+14155552001' });
    expect(dupInRequest).toMatchObject({ success: false, error: 'duplicate_contact', existing_contact_id: ok.contact_id });
    expect(bad).toMatchObject({ success: false, error: 'invalid_phone_number', phone_number: 'garbage' });
    expect(none).toEqual({ success: false, contact_id: null, phone_number: null, error: 'invalid_phone_number', message: 'phone_number is required' });
    expect(national).toMatchObject({ success: false, error: 'invalid_phone_number', phone_number: '14155552002', message: expect.stringContaining('leading +') });
    expect(numeric).toMatchObject({ success: false, error: 'invalid_phone_number', message: 'phone_number must be a string' });
  });

  it('fails a bulk update item with a number without its leading + as invalid_phone_number, with the message of a create', async () => {
    const t = await newTenant();
    const existing = (await invoke('POST /contacts/v1', { apiKey: t.apiKey, body: { phone_number: '+14155552100' } })).body.contact;

    const res = await bulk(t.apiKey, { operation: 'update', contacts: [{ id: existing.id, phone_number: '14155552101' }] });

    expect(res.status).toBe(207);
    expect(res.body.results).toEqual([expect.objectContaining({ success: false, contact_id: existing.id, error: 'invalid_phone_number', message: expect.stringContaining('with a leading +') })]);
  });

  it('creates 60 contacts near the size bound (200, past one transaction\'s 4 MB together) and fails, alone, one over it (207)', async () => {
    // Prepare: 31 KB of custom fields each (the bound is 32 KB of data per contact); one item with 40 KB
    const t = await newTenant();
    const fields = (kb: number) => Object.fromEntries(Array.from({ length: kb / 2 }, (_, i) => [`f${i}`, 'x'.repeat(2000)]));
    const near = phones(60, 4155553000).map((phone_number) => ({ phone_number, custom_fields: fields(30) }));

    // Act
    const ok = await bulk(t.apiKey, { operation: 'create', contacts: near });
    const mixed = await bulk(t.apiKey, { operation: 'create', contacts: [{ phone_number: '+14155554000', custom_fields: fields(40) }, { phone_number: '+14155554001', name: 'small' }] });

    // Assess
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ success_count: 60, error_count: 0 });
    expect(mixed.status).toBe(207);
    expect(mixed.body.results).toEqual([
      { success: false, contact_id: null, phone_number: '+14155554000', error: 'create_failed', message: expect.stringContaining('at most 32,768') },
      { success: true, contact_id: expect.any(String), phone_number: '+14155554001' },
    ]);
    const stored = await Promise.all(ok.body.results.map((r: { contact_id: string }) => invoke('GET /contacts/v1/{id}', { apiKey: t.apiKey, params: { id: r.contact_id } })));
    expect(stored.every((r) => r.status === 200 && Object.keys(r.body.contact.custom_fields).length === 15)).toBe(true);
  });

  it('answers 207 with success_count 0 when every item fails', async () => {
    const t = await newTenant();
    const res = await bulk(t.apiKey, { operation: 'delete', contact_ids: ['00000000-0000-4000-8000-000000000000'] });
    expect(res.status).toBe(207);
    expect(res.body).toEqual({ operation: 'delete', success_count: 0, error_count: 1, results: [{ success: false, contact_id: '00000000-0000-4000-8000-000000000000', error: 'not_found', message: expect.any(String) }] });
  });

  it('updates, tags, untags, sets the funnel stage and deletes, with not_found per unknown id and events per contact', async () => {
    const t = await newTenant();
    const created = (await bulk(t.apiKey, { operation: 'create', contacts: phones(3, 4155553000).map((phone_number) => ({ phone_number, tags: ['old'] })) })).body.results;
    const ids: string[] = created.map((r: any) => r.contact_id);
    const unknown = '00000000-0000-4000-8000-000000000000';
    const stage = (await invoke('POST /funnel/v1/stages', { apiKey: t.apiKey, body: { name: 'Lead' } })).body.stage;

    const upd = await bulk(t.apiKey, { operation: 'update', contacts: [{ id: ids[0], add_tags: ['x'], custom_fields: { plan: 'pro' } }, { id: unknown, add_tags: ['x'] }] });
    const add = await bulk(t.apiKey, { operation: 'add_tags', contact_ids: ids, tags: ['vip', 'x'] });
    const rem = await bulk(t.apiKey, { operation: 'remove_tags', contact_ids: [ids[1], ids[2]], tags: ['OLD'] });
    const set = await bulk(t.apiKey, { operation: 'set_funnel_stage', contact_ids: [...ids, 'not-a-uuid'], funnel_stage_id: stage.id });
    const countAfterSet = (await invoke('GET /funnel/v1/stages/{id}', { apiKey: t.apiKey, params: { id: stage.id } })).body.stage.contact_count;
    const del = await bulk(t.apiKey, { operation: 'delete', contact_ids: [ids[0]] });
    const k2 = (await createApiKey(t.businessId, ['contacts:read', 'funnels:read'])).apiKey;
    const countAfterDelete = (await invoke('GET /funnel/v1/stages/{id}', { apiKey: k2, params: { id: stage.id } })).body.stage.contact_count;

    expect(upd.status).toBe(207);
    expect(upd.body.results).toEqual([{ success: true, contact_id: ids[0] }, { success: false, contact_id: unknown, error: 'not_found', message: expect.any(String) }]);
    expect(add.status).toBe(200);
    expect(rem.status).toBe(200);
    expect(set.status).toBe(207);
    expect(set.body.results[3]).toMatchObject({ success: false, error: 'not_found' });
    expect(countAfterSet).toBe(3);
    expect(del.status).toBe(200);
    expect(countAfterDelete).toBe(2);
    const get = (id: string) => invoke('GET /contacts/v1/{id}', { apiKey: k2, params: { id } }).then((r) => r.body.contact);
    expect(await get(ids[1])).toMatchObject({ tags: ['vip', 'x'], funnel_stage_id: stage.id });
    expect((await invoke('GET /contacts/v1/{id}', { apiKey: k2, params: { id: ids[0] } })).status).toBe(404);
    expect(eventsOf(t.businessId, 'contact.stage_changed').map((e) => e.data.contact_id).sort()).toEqual([...ids].sort());
    expect(eventsOf(t.businessId, 'contact.deleted').map((e) => e.data.contact_id)).toEqual([ids[0]]);
    // update (1) + add_tags (3) + remove_tags (2)
    expect(eventsOf(t.businessId, 'contact.updated')).toHaveLength(6);
  });

  it('takes every field of the single-contact create: agent, funnel stage and opt-out are applied, unknown ones fail their item', async () => {
    const t = await newTenant();
    const ana = await addAgent(t.businessId, { email: 'ana@x.com' });
    const stage = (await invoke('POST /funnel/v1/stages', { apiKey: t.apiKey, body: { name: 'Lead' } })).body.stage;
    const unknown = '00000000-0000-4000-8000-000000000000';

    const res = await bulk(t.apiKey, {
      operation: 'create',
      contacts: [
        { phone_number: '+14155554000', assigned_agent_id: ana.id, funnel_stage_id: stage.id },
        { phone_number: '+14155554001', opted_out: true },
        { phone_number: '+14155554002', assigned_agent_id: unknown },
        { phone_number: '+14155554003', funnel_stage_id: unknown },
        // The same number as the first item, whose agent sends it alone: the first in the request wins.
        { phone_number: '+1 415 555 4000' },
      ],
    });

    expect(res.status).toBe(207);
    const [placed, optedOut, noAgent, noStage, repeat] = res.body.results;
    expect(placed).toEqual({ success: true, contact_id: expect.any(String), phone_number: '+14155554000' });
    expect(optedOut).toMatchObject({ success: true });
    expect(noAgent).toMatchObject({ success: false, error: 'create_failed', phone_number: '+14155554002', message: expect.stringContaining('assigned_agent_id') });
    expect(noStage).toMatchObject({ success: false, error: 'create_failed', phone_number: '+14155554003', message: expect.stringContaining('funnel_stage_id') });
    expect(repeat).toMatchObject({ success: false, error: 'duplicate_contact', existing_contact_id: placed.contact_id });
    const get = (id: string) => invoke('GET /contacts/v1/{id}', { apiKey: t.apiKey, params: { id } }).then((r) => r.body.contact);
    expect(await get(placed.contact_id)).toMatchObject({ assigned_agent_id: ana.id, funnel_stage_id: stage.id });
    expect(await get(optedOut.contact_id)).toMatchObject({ opted_out: true });
    expect((await invoke('GET /funnel/v1/stages/{id}', { apiKey: t.apiKey, params: { id: stage.id } })).body.stage.contact_count).toBe(1);
    expect(eventsOf(t.businessId, 'contact.created')).toHaveLength(2);
  });

  it("closes a deleted contact's open conversation (its agent's count drops, conversation.closed), deleted alone or in bulk", async () => {
    // Prepare: three contacts of one agent, each with an open, assigned conversation
    const t = await newTenant();
    const ana = await addAgent(t.businessId, { email: 'ana@x.com' });
    const ids: string[] = (await bulk(t.apiKey, { operation: 'create', contacts: phones(3, 4155557000).map((phone_number) => ({ phone_number })) })).body.results.map((r: any) => r.contact_id);
    expect((await bulk(t.apiKey, { operation: 'update', contacts: ids.map((id) => ({ id, assigned_agent_id: ana.id })) })).status).toBe(200);
    const conversations = await Promise.all(ids.map(async (id) => (await findOrCreateConversation(t.businessId, (await getContact(t.businessId, id))!)).conversation.id));
    const assigned = async () => (await invoke('GET /team/v1', { apiKey: t.apiKey })).body.agents.find((a: any) => a.id === ana.id).assigned_conversations;
    expect(await assigned()).toBe(3);

    // Act
    expect((await invoke('DELETE /contacts/v1/{id}', { apiKey: t.apiKey, params: { id: ids[0] } })).status).toBe(200);
    expect((await bulk(t.apiKey, { operation: 'delete', contact_ids: ids.slice(1) })).status).toBe(200);

    // Assess
    for (const id of conversations) {
      expect((await invoke('GET /conversations/v1/{id}', { apiKey: t.apiKey, params: { id } })).body.conversation).toMatchObject({ status: 'closed', closedAt: expect.any(String) });
    }
    expect(await assigned()).toBe(0);
    expect(eventsOf(t.businessId, 'conversation.closed').map((e) => e.data.conversation_id).sort()).toEqual([...conversations].sort());
  });

  it('takes every field of the single-contact update: agent, funnel stage and phone number change with their events', async () => {
    const t = await newTenant();
    const ana = await addAgent(t.businessId, { email: 'ana@x.com' });
    const stage = (await invoke('POST /funnel/v1/stages', { apiKey: t.apiKey, body: { name: 'Lead' } })).body.stage;
    const ids: string[] = (await bulk(t.apiKey, { operation: 'create', contacts: phones(3, 4155555000).map((phone_number) => ({ phone_number })) })).body.results.map((r: any) => r.contact_id);
    const { conversation } = await findOrCreateConversation(t.businessId, (await getContact(t.businessId, ids[0]))!);

    const res = await bulk(t.apiKey, {
      operation: 'update',
      contacts: [
        { id: ids[0], assigned_agent_id: ana.id, name: 'Ana\'s lead' },
        { id: ids[1], funnel_stage_id: stage.id },
        { id: ids[2], phone_number: '+14155555999' },
        { id: ids[1], assigned_agent_id: '00000000-0000-4000-8000-000000000000' },
        // Another contact's number: the item names the contact it was for, and the one holding the number.
        { id: ids[1], phone_number: '+14155555000' },
      ],
    });

    expect(res.status).toBe(207);
    expect(res.body.results.map((r: any) => r.success)).toEqual([true, true, true, false, false]);
    expect(res.body.results[3]).toMatchObject({ error: 'update_failed', contact_id: ids[1] });
    expect(res.body.results[4]).toMatchObject({ error: 'duplicate_contact', contact_id: ids[1], existing_contact_id: ids[0] });
    const get = (id: string) => invoke('GET /contacts/v1/{id}', { apiKey: t.apiKey, params: { id } }).then((r) => r.body.contact);
    expect(await get(ids[0])).toMatchObject({ assigned_agent_id: ana.id, name: "Ana's lead" });
    expect(await get(ids[1])).toMatchObject({ funnel_stage_id: stage.id, assigned_agent_id: null });
    expect(await get(ids[2])).toMatchObject({ phone_number: '+14155555999' });
    const assigned = (await db.send(new GetCommand({ TableName: table(), Key: keys.conversation(t.businessId, conversation.id), ConsistentRead: true }))).Item!.assignedAgentId;
    expect(assigned).toBe(ana.id);
    expect(eventsOf(t.businessId, 'conversation.assigned').map((e) => e.data.conversation_id)).toEqual([conversation.id]);
    expect(eventsOf(t.businessId, 'contact.stage_changed').map((e) => e.data.contact_id)).toEqual([ids[1]]);
    expect((await invoke('GET /funnel/v1/stages/{id}', { apiKey: t.apiKey, params: { id: stage.id } })).body.stage.contact_count).toBe(1);
  });

  it.each([
    [{ operation: 'merge', contact_ids: ['00000000-0000-4000-8000-000000000000'] }, 400],
    [{ operation: 'create', contacts: phones(101).map((phone_number) => ({ phone_number })) }, 400],
    [{ operation: 'delete', contact_ids: Array.from({ length: 101 }, () => '00000000-0000-4000-8000-000000000000') }, 400],
    [{ operation: 'add_tags', contact_ids: ['00000000-0000-4000-8000-000000000000'] }, 400],
    [{ operation: 'delete' }, 400],
    [{ operation: 'set_funnel_stage', contact_ids: ['00000000-0000-4000-8000-000000000000'] }, 400],
    [{ operation: 'set_funnel_stage', contact_ids: ['00000000-0000-4000-8000-000000000000'], funnel_stage_id: '00000000-0000-4000-8000-000000000001' }, 404],
  ])('refuses the request %#', async (body, status) => {
    const t = await newTenant();
    const res = await bulk(t.apiKey, body);
    expect(res.status).toBe(status);
    expect(res.body.error).toBe(status === 404 ? 'not_found' : 'validation_error');
  });

  it('limits bulk requests to 10 per minute per key', async () => {
    const t = await newTenant();
    await clearOfMinuteEnd();
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push((await bulk(t.apiKey, { operation: 'delete', contact_ids: ['00000000-0000-4000-8000-000000000000'] })).status);
    expect(statuses.slice(0, 10).every((s) => s === 207)).toBe(true);
    expect(statuses[10]).toBe(429);
  }, 30_000);
});
