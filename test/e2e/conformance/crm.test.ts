/**
 * Contract conformance (black-box) for the CRM side: funnel stages, contact stage moves, bulk contact
 * operations, team, AI control, authentication and the generic error shapes, read from
 * service-interface.md and decisions.md only, checked over HTTP against the local stack.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startMessagingStack, randomPhone, type MessagingStack, type Tenant } from '../messages/stack.ts';

let m: MessagingStack;
beforeAll(async () => {
  m = await startMessagingStack();
}, 60_000);
afterAll(() => m?.stop());

/** A local webhook receiver: what a subscriber of `*` gets. */
async function receiver(): Promise<{ url: string; events: { event: string; data: any }[]; close: () => void }> {
  const events: { event: string; data: any }[] = [];
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      events.push(JSON.parse(raw));
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, events, close: () => server.close() };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const MISSING = '00000000-0000-4000-8000-000000000000';
const validationError = (field: string) => ({ error: 'validation_error', message: expect.any(String), details: expect.objectContaining({ [field]: expect.arrayContaining([expect.any(String)]) }) });

const contact = async (t: Tenant) => {
  const res = await t.call('POST', '/contacts/v1', { phone_number: randomPhone(), name: 'Ana' });
  expect(res.status).toBe(201);
  return res.body.contact.id as string;
};

describe('funnel stages', () => {
  it('creates with defaults (201 { stage }), appends, inserts at a position, and gets', async () => {
    // Prepare
    const t = await m.tenant();
    // Act
    const first = await t.call('POST', '/funnel/v1/stages', { name: 'Lead' });
    const second = await t.call('POST', '/funnel/v1/stages', { name: 'Won', color: '#10B981' });
    const inserted = await t.call('POST', '/funnel/v1/stages', { name: 'Qualified', position: 0 });
    const got = await t.call('GET', `/funnel/v1/stages/${first.body.stage.id}`);
    const list = await t.call('GET', '/funnel/v1/stages');
    // Assess
    expect(first.status).toBe(201);
    expect(first.body).toEqual({ stage: { id: expect.stringMatching(UUID), name: 'Lead', position: 0, color: '#6366f1', contact_count: 0, created_at: expect.stringMatching(ISO), updated_at: expect.stringMatching(ISO) } });
    expect(second.body.stage).toMatchObject({ position: 1, color: '#10B981' });
    expect(inserted.body.stage.position).toBe(0);
    expect(got.status).toBe(200);
    expect(got.body).toEqual({ stage: { ...first.body.stage, position: 1, updated_at: expect.any(String) } });
    expect(list.status).toBe(200);
    expect(list.body.stages.map((s: any) => [s.name, s.position])).toEqual([['Qualified', 0], ['Lead', 1], ['Won', 2]]);
    const past = await t.call('POST', '/funnel/v1/stages', { name: 'Lost', position: 99 });
    expect(past.status).toBe(201);
    expect(past.body.stage.position).toBe(3);
  });

  it('validates name 1-100 and color #RRGGBB with details per field', async () => {
    const t = await m.tenant();
    expect((await t.call('POST', '/funnel/v1/stages', { name: 'x'.repeat(100) })).status).toBe(201);
    const long = await t.call('POST', '/funnel/v1/stages', { name: 'x'.repeat(101) });
    expect(long.status).toBe(400);
    expect(long.body).toEqual(validationError('name'));
    const empty = await t.call('POST', '/funnel/v1/stages', { name: '' });
    expect(empty.status).toBe(400);
    expect(empty.body).toEqual(validationError('name'));
    const missing = await t.call('POST', '/funnel/v1/stages', {});
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual(validationError('name'));
    for (const color of ['#abc', 'red', '6366f1', '#GGGGGG', '#6366f1ff']) {
      const bad = await t.call('POST', '/funnel/v1/stages', { name: 'A', color });
      expect([color, bad.status]).toEqual([color, 400]);
      expect(bad.body).toEqual(validationError('color'));
    }
    const badPatch = await t.call('PATCH', `/funnel/v1/stages/${MISSING}`, { name: 'x'.repeat(101) });
    expect(badPatch.status).toBe(400);
    expect(badPatch.body).toEqual(validationError('name'));
    const badPosition = await t.call('POST', '/funnel/v1/stages', { name: 'A', position: -1 });
    expect(badPosition.status).toBe(400);
    expect(badPosition.body.error).toBe('validation_error');
  });

  it('patches only the sent fields; 404 not_found for an unknown stage', async () => {
    const t = await m.tenant();
    const { stage } = (await t.call('POST', '/funnel/v1/stages', { name: 'Lead', color: '#111111' })).body;
    const renamed = await t.call('PATCH', `/funnel/v1/stages/${stage.id}`, { name: 'Prospect' });
    expect(renamed.status).toBe(200);
    expect(renamed.body.stage).toMatchObject({ id: stage.id, name: 'Prospect', color: '#111111', position: 0 });
    const recolored = await t.call('PATCH', `/funnel/v1/stages/${stage.id}`, { color: '#222222' });
    expect(recolored.body.stage).toMatchObject({ name: 'Prospect', color: '#222222' });
    for (const [method, path] of [['GET', `/funnel/v1/stages/${MISSING}`], ['PATCH', `/funnel/v1/stages/${MISSING}`], ['DELETE', `/funnel/v1/stages/${MISSING}`]] as const) {
      const res = await t.call(method, path, method === 'PATCH' ? { name: 'A' } : undefined);
      expect([path, method, res.status]).toEqual([path, method, 404]);
      expect(res.body).toEqual({ error: 'not_found', message: expect.any(String) });
    }
  });

  it('reorders (listed first, others keep relative order), 404 with invalid_ids for unknown ids', async () => {
    const t = await m.tenant();
    const ids: string[] = [];
    for (const name of ['A', 'B', 'C', 'D']) ids.push((await t.call('POST', '/funnel/v1/stages', { name })).body.stage.id);
    const res = await t.call('PATCH', '/funnel/v1/stages/reorder', { stage_ids: [ids[3], ids[1]] });
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.stages.map((s: any) => [s.name, s.position])).toEqual([['D', 0], ['B', 1], ['A', 2], ['C', 3]]);
    const unknown = await t.call('PATCH', '/funnel/v1/stages/reorder', { stage_ids: [ids[0], MISSING] });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: 'not_found', message: expect.any(String), invalid_ids: [MISSING] });
    const missing = await t.call('PATCH', '/funnel/v1/stages/reorder', {});
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual(validationError('stage_ids'));
    const notUuid = await t.call('PATCH', '/funnel/v1/stages/reorder', { stage_ids: ['nope'] });
    expect(notUuid.status).toBe(400);
    expect(notUuid.body.error).toBe('validation_error');
  });

  it('refuses the 51st stage with 400 stage_limit_reached', async () => {
    const t = await m.tenant();
    for (let i = 0; i < 50; i++) expect((await t.call('POST', '/funnel/v1/stages', { name: `S${i}` })).status).toBe(201);
    const over = await t.call('POST', '/funnel/v1/stages', { name: 'S50' });
    expect(over.status).toBe(400);
    expect(over.body).toEqual({ error: 'stage_limit_reached', message: expect.any(String) });
  }, 60_000);

  it('moves contacts, counts them, refuses to delete a non-empty stage, deletes an empty one', async () => {
    const t = await m.tenant();
    const a = (await t.call('POST', '/funnel/v1/stages', { name: 'A' })).body.stage;
    const b = (await t.call('POST', '/funnel/v1/stages', { name: 'B' })).body.stage;
    const c = await contact(t);
    const into = await t.call('POST', `/funnel/v1/contacts/${c}/move`, { stage_id: a.id });
    expect(into.status).toBe(200);
    expect(into.body).toEqual({ contact_id: c, previous_stage: null, new_stage: { id: a.id, name: 'A' }, moved_at: expect.stringMatching(ISO) });
    const across = await t.call('POST', `/funnel/v1/contacts/${c}/move`, { stage_id: b.id });
    expect(across.body).toMatchObject({ previous_stage: { id: a.id, name: 'A' }, new_stage: { id: b.id, name: 'B' } });
    expect((await t.call('GET', `/funnel/v1/stages/${b.id}`)).body.stage.contact_count).toBe(1);
    expect((await t.call('GET', `/funnel/v1/stages/${a.id}`)).body.stage.contact_count).toBe(0);
    const blocked = await t.call('DELETE', `/funnel/v1/stages/${b.id}`);
    expect(blocked.status).toBe(400);
    expect(blocked.body).toEqual({ error: 'stage_not_empty', message: expect.any(String), contact_count: 1 });
    const out = await t.call('POST', `/funnel/v1/contacts/${c}/move`, { stage_id: null });
    expect(out.body).toMatchObject({ previous_stage: { id: b.id, name: 'B' }, new_stage: null });
    const deleted = await t.call('DELETE', `/funnel/v1/stages/${b.id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ success: true, id: b.id });
    expect((await t.call('GET', `/funnel/v1/stages/${b.id}`)).status).toBe(404);
  });

  it('move: separate 404s for contact and stage; stage_id is required', async () => {
    const t = await m.tenant();
    const a = (await t.call('POST', '/funnel/v1/stages', { name: 'A' })).body.stage;
    const c = await contact(t);
    const noContact = await t.call('POST', `/funnel/v1/contacts/${MISSING}/move`, { stage_id: a.id });
    const noStage = await t.call('POST', `/funnel/v1/contacts/${c}/move`, { stage_id: MISSING });
    expect(noContact.status).toBe(404);
    expect(noStage.status).toBe(404);
    expect(noContact.body).toEqual({ error: 'not_found', message: expect.any(String) });
    expect(noStage.body).toEqual({ error: 'not_found', message: expect.any(String) });
    expect(noContact.body.message).not.toBe(noStage.body.message);
    const missing = await t.call('POST', `/funnel/v1/contacts/${c}/move`, {});
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual(validationError('stage_id'));
  });

  it('emits the funnel events with the contract payloads', async () => {
    const t = await m.tenant();
    const hook = await receiver();
    expect((await t.call('POST', '/user-webhooks', { name: 'all', url: hook.url, events: ['*'] })).status).toBe(201);
    const a = (await t.call('POST', '/funnel/v1/stages', { name: 'A' })).body.stage;
    const b = (await t.call('POST', '/funnel/v1/stages', { name: 'B' })).body.stage;
    await t.call('PATCH', `/funnel/v1/stages/${a.id}`, { name: 'A2' });
    await t.call('PATCH', '/funnel/v1/stages/reorder', { stage_ids: [b.id, a.id] });
    const c = await contact(t);
    await t.call('POST', `/funnel/v1/contacts/${c}/move`, { stage_id: a.id });
    await t.call('POST', `/funnel/v1/contacts/${c}/move`, { stage_id: null });
    await t.call('DELETE', `/funnel/v1/stages/${b.id}`);
    await m.stack.queues.idle();
    const events = hook.events;
    hook.close();
    const of = (name: string) => events.filter((e) => e.event === name).map((e) => e.data);
    expect(of('funnel_stage.created')[0]).toEqual(expect.objectContaining({ stage_id: a.id, name: 'A', position: 0, color: '#6366f1', created_at: expect.stringMatching(ISO) }));
    expect(of('funnel_stage.updated')[0]).toEqual(expect.objectContaining({ stage_id: a.id, name: 'A2', color: '#6366f1', updated_at: expect.stringMatching(ISO) }));
    expect(of('funnel_stages.reordered')[0]).toEqual(expect.objectContaining({ stage_ids: [b.id, a.id], reordered_at: expect.stringMatching(ISO) }));
    expect(of('contact.stage_changed')[0]).toEqual(expect.objectContaining({ contact_id: c, phone_number: expect.stringMatching(/^\+/), previous_stage_id: null, previous_stage_name: null, new_stage_id: a.id, new_stage_name: 'A2', moved_at: expect.stringMatching(ISO) }));
    expect(of('contact.stage_changed')[1]).toEqual(expect.objectContaining({ previous_stage_id: a.id, new_stage_id: null, new_stage_name: null }));
    expect(of('funnel_stage.deleted')).toHaveLength(1);
  });
});

describe('bulk contact operations', () => {
  it('creates 100 contacts (200), refuses 101 (400 validation_error), reports duplicates and bad phones (207)', async () => {
    const t = await m.tenant();
    const phones = Array.from({ length: 100 }, () => randomPhone());
    const full = await t.call('POST', '/contacts/v1/bulk', { operation: 'create', contacts: phones.map((p) => ({ phone_number: p, name: 'N' })) });
    expect(full.status).toBe(200);
    expect(full.body).toMatchObject({ operation: 'create', success_count: 100, error_count: 0 });
    expect(full.body.results[0]).toEqual(expect.objectContaining({ success: true, contact_id: expect.stringMatching(UUID), phone_number: phones[0] }));
    const over = await t.call('POST', '/contacts/v1/bulk', { operation: 'create', contacts: Array.from({ length: 101 }, () => ({ phone_number: randomPhone() })) });
    expect(over.status).toBe(400);
    expect(over.body.error).toBe('validation_error');
    const mixed = await t.call('POST', '/contacts/v1/bulk', { operation: 'create', contacts: [{ phone_number: phones[0] }, { phone_number: 'abc' }, { phone_number: randomPhone() }] });
    expect(mixed.status).toBe(207);
    expect(mixed.body).toMatchObject({ operation: 'create', success_count: 1, error_count: 2 });
    expect(mixed.body.results[0]).toEqual(expect.objectContaining({ success: false, error: 'duplicate_contact', existing_contact_id: full.body.results[0].contact_id }));
    expect(mixed.body.results[1]).toEqual(expect.objectContaining({ success: false, error: 'invalid_phone_number' }));
  });

  it('runs tags, set_funnel_stage, update and delete with per-contact results; unknown ids are not_found items', async () => {
    const t = await m.tenant();
    const stage = (await t.call('POST', '/funnel/v1/stages', { name: 'A' })).body.stage;
    const ids = [await contact(t), await contact(t)];
    const tagged = await t.call('POST', '/contacts/v1/bulk', { operation: 'add_tags', contact_ids: ids, tags: ['vip', 'b'] });
    expect(tagged.status).toBe(200);
    expect(tagged.body.results).toEqual([expect.objectContaining({ success: true, contact_id: ids[0] }), expect.objectContaining({ success: true, contact_id: ids[1] })]);
    const untagged = await t.call('POST', '/contacts/v1/bulk', { operation: 'remove_tags', contact_ids: [ids[0], MISSING], tags: ['b'] });
    expect(untagged.status).toBe(207);
    expect(untagged.body.results[1]).toEqual(expect.objectContaining({ success: false, contact_id: MISSING, error: 'not_found' }));
    expect((await t.call('GET', `/contacts/v1/${ids[0]}`)).body.contact.tags).toEqual(['vip']);
    const staged = await t.call('POST', '/contacts/v1/bulk', { operation: 'set_funnel_stage', contact_ids: ids, funnel_stage_id: stage.id });
    expect(staged.body).toMatchObject({ operation: 'set_funnel_stage', success_count: 2, error_count: 0 });
    expect((await t.call('GET', `/funnel/v1/stages/${stage.id}`)).body.stage.contact_count).toBe(2);
    const updated = await t.call('POST', '/contacts/v1/bulk', { operation: 'update', contacts: [{ id: ids[0], add_tags: ['new'], custom_fields: { plan: 'gold' } }] });
    expect(updated.body).toMatchObject({ operation: 'update', success_count: 1 });
    expect((await t.call('GET', `/contacts/v1/${ids[0]}`)).body.contact).toMatchObject({ tags: ['vip', 'new'], custom_fields: { plan: 'gold' } });
    const deleted = await t.call('POST', '/contacts/v1/bulk', { operation: 'delete', contact_ids: ids });
    expect(deleted.body).toMatchObject({ operation: 'delete', success_count: 2 });
    expect((await t.call('GET', `/contacts/v1/${ids[0]}`)).status).toBe(404);
    const badOp = await t.call('POST', '/contacts/v1/bulk', { operation: 'merge', contact_ids: ids });
    expect(badOp.status).toBe(400);
    expect(badOp.body).toEqual(validationError('operation'));
  });

  it('answers the 11th bulk request within a minute with 429 rate_limited', async () => {
    const t = await m.tenant();
    const msIntoMinute = Date.now() % 60_000;
    if (msIntoMinute > 50_000) await new Promise((r) => setTimeout(r, 60_000 - msIntoMinute + 50));
    for (let i = 0; i < 10; i++) expect((await t.call('POST', '/contacts/v1/bulk', { operation: 'delete', contact_ids: [MISSING] })).status).toBe(207);
    const limited = await t.call('POST', '/contacts/v1/bulk', { operation: 'delete', contact_ids: [MISSING] });
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ error: 'rate_limited', message: expect.any(String), retry_after: expect.any(Number) });
    expect(limited.headers.get('x-ratelimit-limit')).toBe('10');
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
  }, 30_000);
});

describe('team', () => {
  it('lists agents with the contract fields; assigned_agent_id on contacts must name an agent', async () => {
    const t = await m.tenant();
    const { addAgent } = await import('#shared/team/repository.ts');
    const agent = await addAgent(t.businessId, { email: 'ana@x.test', name: 'Ana', role: 'agent', available: true });
    const team = await t.call('GET', '/team/v1');
    expect(team.status).toBe(200);
    expect(team.body).toEqual({ agents: [{ id: agent.id, name: 'Ana', email: 'ana@x.test', role: 'agent', is_available: true, assigned_conversations: 0 }] });
    const assigned = await t.call('POST', '/contacts/v1', { phone_number: randomPhone(), assigned_agent_id: agent.id });
    expect(assigned.status).toBe(201);
    expect(assigned.body.contact.assigned_agent_id).toBe(agent.id);
  });

  it('assigning an agent to a contact assigns its active conversation (counted in assigned_conversations)', async () => {
    const t = await m.tenant();
    const { addAgent } = await import('#shared/team/repository.ts');
    const agent = await addAgent(t.businessId, { email: 'bo@x.test', name: 'Bo' });
    const phone = randomPhone();
    await t.call('POST', '/agent/v1/toggle', { enabled: false });
    await t.inbound(phone, 'hola');
    const found = (await t.call('GET', `/contacts/v1?search=${encodeURIComponent(phone)}`)).body.contacts[0];
    const patched = await t.call('PATCH', `/contacts/v1/${found.id}`, { assigned_agent_id: agent.id });
    expect(patched.status).toBe(200);
    const team = await t.call('GET', '/team/v1');
    expect(team.body.agents[0]).toMatchObject({ id: agent.id, role: 'agent', is_available: true, assigned_conversations: 1 });
    const unknownAgent = await t.call('PATCH', `/contacts/v1/${found.id}`, { assigned_agent_id: MISSING });
    expect(unknownAgent.status).toBe(400);
  });
});

describe('AI control', () => {
  it('toggles and pauses a conversation with the contract bodies and limits', async () => {
    const t = await m.tenant();
    const phone = randomPhone();
    await t.call('PATCH', '/agent/v1/settings', { debounceSeconds: 0 });
    await t.inbound(phone, 'hola');
    const conv = (await t.call('GET', '/conversations/v1?limit=100')).body.conversations[0].id;
    const off = await t.call('PATCH', `/conversations/v1/${conv}/ai`, { aiEnabled: false });
    expect(off.status).toBe(200);
    expect(off.body).toEqual({ message: expect.any(String), settings: { aiEnabled: false, aiMode: expect.any(String), aiPausedUntil: null } });
    expect((await t.call('PATCH', `/conversations/v1/${conv}/ai`, {})).status).toBe(400);
    const before = Date.now();
    const paused = await t.call('POST', `/conversations/v1/${conv}/ai/pause`, {});
    expect(paused.status).toBe(200);
    expect(paused.body).toEqual({ success: true, pausedUntil: expect.stringMatching(ISO), message: expect.any(String) });
    expect(Math.abs(Date.parse(paused.body.pausedUntil) - before - 5 * 60_000)).toBeLessThan(10_000);
    expect((await t.call('POST', `/conversations/v1/${conv}/ai/pause`, { duration: 1440 })).status).toBe(200);
    expect((await t.call('POST', `/conversations/v1/${conv}/ai/pause`, { duration: 1 })).status).toBe(200);
    for (const duration of [0, 1441, 'x']) expect((await t.call('POST', `/conversations/v1/${conv}/ai/pause`, { duration })).status).toBe(400);
    expect((await t.call('PATCH', `/conversations/v1/${MISSING}/ai`, { aiEnabled: true })).status).toBe(404);
    expect((await t.call('POST', `/conversations/v1/${MISSING}/ai/pause`, {})).body).toEqual({ error: 'not_found', message: expect.any(String) });
  });

  it('pauses and toggles globally; invalid duration is `Invalid duration`', async () => {
    const t = await m.tenant();
    for (const body of [{}, { duration: 0 }, { duration: 1441 }, { duration: 'x' }]) {
      const res = await t.call('POST', '/agent/v1/pause', body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'Invalid duration', message: expect.stringContaining('1440') });
    }
    const paused = await t.call('POST', '/agent/v1/pause', { duration: 1440 });
    expect(paused.status).toBe(200);
    expect(paused.body).toEqual({ success: true, pausedUntil: expect.stringMatching(ISO), message: expect.any(String) });
    expect((await t.call('POST', '/agent/pause', { duration: 1 })).status).toBe(200);
    const status = await t.call('GET', '/agent/v1/status');
    expect(status.body).toEqual({ enabled: expect.any(Boolean), pausedUntil: expect.stringMatching(ISO) });
    for (const path of ['/agent/toggle', '/agent/v1/toggle']) {
      const off = await t.call('POST', path, { enabled: false });
      expect(off.status).toBe(200);
      expect(off.body).toEqual({ success: true, enabled: false });
    }
    expect((await t.call('GET', '/agent/v1/status')).body.enabled).toBe(false);
    expect((await t.call('POST', '/agent/toggle', {})).status).toBe(400);
  });
});

describe('authentication and generic errors', () => {
  it('401 for missing, malformed, unknown and revoked keys; 403 for a missing scope', async () => {
    const t = await m.tenant();
    const { createApiKey, revokeApiKey } = await import('#shared/auth/api-keys.ts');
    const unauthorized = { error: 'unauthorized', message: expect.any(String) };
    const call = (authorization?: string) => fetch(`${m.stack.url}/funnel/v1/stages`, { headers: authorization ? { authorization } : {} });
    for (const auth of [undefined, t.apiKey, `Token ${t.apiKey}`, `Bearer wak_${'a'.repeat(40)}`, 'Bearer nope']) {
      const res = await call(auth);
      expect([auth, res.status]).toEqual([auth, 401]);
      expect(await res.json()).toEqual(unauthorized);
    }
    const narrow = await createApiKey(t.businessId, ['funnels:read']);
    expect(narrow.apiKey).toMatch(/^wak_[0-9A-Za-z]{40}$/);
    expect((await call(`Bearer ${narrow.apiKey}`)).status).toBe(200);
    const write = await fetch(`${m.stack.url}/funnel/v1/stages`, { method: 'POST', headers: { authorization: `Bearer ${narrow.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'A' }) });
    expect(write.status).toBe(403);
    expect(await write.json()).toEqual({ error: 'forbidden', message: expect.any(String) });
    // A refusal for a scope is an answer of the route's limited class too (decisions.md: headers on every response).
    for (const h of ['retry-after', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) expect([h, write.headers.get(h)]).toEqual([h, expect.stringMatching(/^\d+$/)]);
    await revokeApiKey(narrow.keyId);
    const revoked = await call(`Bearer ${narrow.apiKey}`);
    expect(revoked.status).toBe(401);
    expect(await revoked.json()).toEqual(unauthorized);
    // The scheme is case-insensitive (RFC 9110).
    expect((await call(`bearer ${t.apiKey}`)).status).toBe(200);
    expect((await call(`BEARER ${t.apiKey}`)).status).toBe(200);
  });

  it('takes a JSON body whatever its Content-Type says (fetch sends a string as text/plain), and refuses one that is not JSON', async () => {
    // Prepare
    const t = await m.tenant();
    const post = (path: string, body: string, headers: Record<string, string> = {}) =>
      fetch(`${m.stack.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${t.apiKey}`, ...headers }, body });

    // Act
    const asText = await post('/funnel/v1/stages', JSON.stringify({ name: 'Sent as text' }));
    const asForm = await post('/funnel/v1/stages', JSON.stringify({ name: 'Sent as a form' }), { 'content-type': 'application/x-www-form-urlencoded' });
    const formData = await post('/funnel/v1/stages', 'name=Form', { 'content-type': 'application/x-www-form-urlencoded' });

    // Assess
    expect(asText.headers.get('content-type')).toMatch(/json/);
    expect([asText.status, ((await asText.json()) as any).stage?.name]).toEqual([201, 'Sent as text']);
    expect([asForm.status, ((await asForm.json()) as any).stage?.name]).toEqual([201, 'Sent as a form']);
    expect(formData.status).toBe(400);
    expect(await formData.json()).toEqual({ error: 'invalid_json', message: expect.stringContaining('application/x-www-form-urlencoded') });
  });

  it('answers unknown routes 404, wrong methods 405 and non-JSON bodies 400 invalid_json', async () => {
    const t = await m.tenant();
    const unknown = await t.call('GET', '/funnel/v1/nothing-here');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: 'not_found', message: expect.any(String) });
    const method = await t.call('PUT', '/funnel/v1/stages');
    expect(method.status).toBe(405);
    for (const path of ['/funnel/v1/stages', '/contacts/v1/bulk', '/agent/v1/pause']) {
      const res = await t.call('POST', path, '{"name": ');
      expect([path, res.status]).toEqual([path, 400]);
      expect(res.body).toEqual({ error: 'invalid_json', message: expect.any(String) });
    }
    // A route that takes no body: a JSON one is ignored, one that is not JSON refused.
    const segment = await t.call('POST', '/segments', { name: 'Evaluated', type: 'dynamic', rules: { version: 3, filters: { tags: { any: ['vip'] } } } });
    expect(segment.status).toBe(201);
    const evaluate = (body: string) => t.call('POST', `/segments/${segment.body.data.id}/evaluate`, body);
    expect((await evaluate('{}')).status).toBe(200);
    const broken = await evaluate('{bad');
    expect(broken.status).toBe(400);
    expect(broken.body).toEqual({ error: 'invalid_json', message: expect.any(String) });
    // Past the JSON cap (2 MB) a body is refused by its size, as on routes that take one.
    expect((await evaluate('x'.repeat(3 * 1024 * 1024))).status).toBe(413);
  });
});

describe('another account\'s records', () => {
  it('answers 403 forbidden for a contact or funnel stage of another business, 404 for an unknown id', async () => {
    // Prepare
    const a = await m.tenant();
    const b = await m.tenant();
    const stage = (await a.call('POST', '/funnel/v1/stages', { name: 'A' })).body.stage;
    const theirs = await contact(a);
    const mine = await contact(b);
    const bulkCreated = (await a.call('POST', '/contacts/v1/bulk', { operation: 'create', contacts: [{ phone_number: randomPhone() }] })).body.results[0].contact_id;
    const forbidden = { error: 'forbidden', message: expect.any(String) };
    // Act
    const probes = [
      await b.call('GET', `/contacts/v1/${theirs}`),
      await b.call('GET', `/contacts/v1/${bulkCreated}`),
      await b.call('PATCH', `/contacts/v1/${theirs}`, { name: 'X' }),
      await b.call('DELETE', `/contacts/v1/${theirs}`),
      await b.call('GET', `/funnel/v1/stages/${stage.id}`),
      await b.call('PATCH', `/funnel/v1/stages/${stage.id}`, { name: 'X' }),
      await b.call('DELETE', `/funnel/v1/stages/${stage.id}`),
      await b.call('POST', `/funnel/v1/contacts/${theirs}/move`, { stage_id: null }),
      await b.call('POST', `/funnel/v1/contacts/${mine}/move`, { stage_id: stage.id }),
    ];
    const bulk = await b.call('POST', '/contacts/v1/bulk', { operation: 'add_tags', contact_ids: [theirs], tags: ['x'] });
    const bulkStage = await b.call('POST', '/contacts/v1/bulk', { operation: 'set_funnel_stage', contact_ids: [mine], funnel_stage_id: stage.id });
    // Assess
    expect(probes.map((r) => r.status)).toEqual(probes.map(() => 403));
    for (const r of probes) expect(r.body).toEqual(forbidden);
    expect(bulkStage.status).toBe(403);
    expect(bulk.body.results[0]).toEqual(expect.objectContaining({ success: false, contact_id: theirs, error: 'not_found' }));
    expect((await a.call('GET', `/contacts/v1/${theirs}`)).body.contact.name).toBe('Ana');
    expect((await a.call('GET', `/funnel/v1/stages/${stage.id}`)).body.stage.name).toBe('A');
    expect((await b.call('GET', `/contacts/v1/${MISSING}`)).status).toBe(404);
  });
});

describe('contacts', () => {
  it('creates (201 { contact }), refuses a duplicate number (409 with existing_contact_id), gets, patches, lists and soft-deletes', async () => {
    const t = await m.tenant();
    const phone = randomPhone();
    const created = await t.call('POST', '/contacts/v1', { phone_number: phone, name: 'Ana', email: 'ana@x.test', tags: ['a'], custom_fields: { plan: 'gold' } });
    expect(created.status).toBe(201);
    expect(created.body.contact).toEqual(expect.objectContaining({ id: expect.stringMatching(UUID), phone_number: phone, name: 'Ana', email: 'ana@x.test', tags: ['a'], custom_fields: { plan: 'gold' }, assigned_agent_id: null }));
    expect(created.headers.get('x-ratelimit-limit')).toBe('100');
    expect(created.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
    expect(Number(created.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000);
    // decisions.md: Retry-After with the X-RateLimit-* headers on every response of a limited class (seconds to the reset)
    expect(Number(created.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(created.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    const id = created.body.contact.id;
    const dup = await t.call('POST', '/contacts/v1', { phone_number: phone });
    expect(dup.status).toBe(409);
    expect(dup.body).toEqual(expect.objectContaining({ error: 'duplicate_contact', existing_contact_id: id }));
    expect((await t.call('GET', `/contacts/v1/${id}`)).body.contact.id).toBe(id);
    const patched = await t.call('PATCH', `/contacts/v1/${id}`, { name: 'Bea' });
    expect(patched.status).toBe(200);
    expect(patched.body.contact).toMatchObject({ id, name: 'Bea', email: 'ana@x.test' });
    const list = await t.call('GET', '/contacts/v1?limit=10');
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ contacts: [expect.objectContaining({ id })], next_cursor: null });
    expect((await t.call('DELETE', `/contacts/v1/${id}`)).status).toBe(200);
    expect((await t.call('GET', `/contacts/v1/${id}`)).status).toBe(404);
    expect((await t.call('GET', '/contacts/v1')).body.contacts).toEqual([]);
  });
});
