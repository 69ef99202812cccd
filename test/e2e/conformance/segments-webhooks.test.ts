/**
 * Contract conformance of Segments (resource, rules v1/v2/v3, endpoints, bulk members, 400/404 causes) and
 * Webhooks (subscription, events, delivery headers, signature, payload shapes, emission), checked over HTTP
 * against the local stack the way a black-box tester reading only the contract and decisions would.
 */
import { createHmac } from 'node:crypto';
import { startTestStack, type LocalStack } from '../../support/stack.ts';
import { startReceiver, verifyHex, verifyStandard, type Receiver } from '../../integration/webhooks/receiver.ts';

let stack: LocalStack;
let receiver: Receiver;
let newTenant: () => Promise<{ apiKey: string; businessId: string; phoneNumberId: string }>;

beforeAll(async () => {
  stack = await startTestStack({ demo: true, queueRetryDelayMs: 100 });
  receiver = await startReceiver();
  const { createBusiness } = await import('#shared/business/repository.ts');
  const { createApiKey } = await import('#shared/auth/api-keys.ts');
  const { SCOPES } = await import('#shared/auth/scopes.ts');
  let seq = 0;
  newTenant = async () => {
    const b = await createBusiness(`Conformance segments-webhooks ${seq++}`);
    return { businessId: b.businessId, phoneNumberId: b.phoneNumberId!, apiKey: (await createApiKey(b.businessId, [...SCOPES])).apiKey };
  };
}, 60_000);
afterAll(async () => {
  await receiver?.close();
  await stack?.stop();
});

const client = (apiKey: string) => async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${stack.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as any };
};

const MISSING = '00000000-0000-4000-8000-000000000000';
const isRuleError = (r: { status: number; body: any }) =>
  r.status === 400 && typeof r.body.error === 'string' && /correct the rule and retry/i.test(r.body.error);
const isFormatError = (r: { status: number; body: any }) =>
  r.status === 400 && r.body.error === 'Datos inválidos' && Array.isArray(r.body.details) && r.body.details.length > 0;

describe('segments: the Segment resource and its rules', () => {
  it('returns every field of the Segment resource, with the appear-only-when fields only when they apply', async () => {
    // Prepare
    const { apiKey } = await newTenant();
    const call = client(apiKey);
    await call('POST', '/contacts/v1', { phone_number: '+5215512340001', name: 'Ana', tags: ['vip'] });

    // Act
    const stat = await call('POST', '/segments', { name: 'Hand-picked', type: 'static', description: 'mine', color: '#ff0000', autoRefreshInterval: 60 });
    const v3 = await call('POST', '/segments', { name: 'VIP', type: 'dynamic', rules: { version: 3, filters: { tags: { any: ['vip'] } } } });
    const v1 = await call('POST', '/segments', { name: 'VIP v1', type: 'dynamic', rules: { operator: 'AND', conditions: [{ field: 'tags', operator: 'contains', value: 'vip' }] } });
    const v2 = await call('POST', '/segments', { name: 'VIP v2', type: 'dynamic', rules: { version: 2, operator: 'AND', groups: [{ operator: 'AND', conditions: [{ field: 'tags', operator: 'contains', value: 'vip' }] }] } });
    const detailV1 = await call('GET', `/segments/${v1.body.data.id}`);
    const typeChange = await call('PATCH', `/segments/${stat.body.data.id}`, { type: 'dynamic', name: 'Renamed' });
    const sameType = await call('PATCH', `/segments/${stat.body.data.id}`, { type: 'static' });
    const list = await call('GET', '/segments');

    // Assess
    expect(stat.status).toBe(201);
    expect(stat.body.data).toMatchObject({ name: 'Hand-picked', type: 'static', description: 'mine', color: '#ff0000', contactCount: 0, rulesFormat: null, filters: null });
    expect(stat.body.data.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(v3.body.data).toMatchObject({ type: 'dynamic', contactCount: 1, rules: { version: 3, filters: { tags: { any: ['vip'] } } }, rulesFormat: 'filters', filters: { tags: { any: ['vip'] } } });
    expect(v1.status).toBe(201);
    expect(v1.body.data.rulesFormat).toBe('legacy');
    expect(v2.status).toBe(201);
    expect(v2.body.data).toMatchObject({ rulesFormat: 'legacy', contactCount: 1 });
    expect(detailV1.body.data).toMatchObject({ rulesFormat: 'legacy', filters: { tags: { all: ['vip'] } }, contactCount: 1 });
    for (const s of [stat.body.data, v3.body.data, v1.body.data, detailV1.body.data, ...list.body.data]) {
      expect(s).not.toHaveProperty('countStale');
      expect(s).not.toHaveProperty('rulesError');
      expect(s).not.toHaveProperty('typeChangeIgnored');
    }
    expect(typeChange.body.data).toMatchObject({ type: 'static', name: 'Renamed', typeChangeIgnored: true });
    expect(sameType.status).toBe(200);
    expect(sameType.body.data).not.toHaveProperty('typeChangeIgnored');
    expect(list.body.data).toHaveLength(4);
  });

  it('answers each "Segment 400 errors" cause with a { error } that asks to correct the rule', async () => {
    // Prepare
    const { apiKey } = await newTenant();
    const call = client(apiKey);
    const stat = await call('POST', '/segments', { name: 'S', type: 'static' });
    const dyn = (rules: unknown) => call('POST', '/segments', { name: 'D', type: 'dynamic', rules });

    // Act
    const causes = {
      absent: await call('POST', '/segments', { name: 'D', type: 'dynamic' }),
      v3OnStatic: await call('POST', '/segments', { name: 'S', type: 'static', rules: { version: 3, filters: { name: 'a' } } }),
      unknownVersion: await dyn({ version: 4, filters: { name: 'a' } }),
      emptyFilters: await dyn({ version: 3, filters: {} }),
      emptyValue: await dyn({ version: 3, filters: { name: '' } }),
      emptyList: await dyn({ version: 3, filters: { tags: { any: [] } } }),
      emptyObject: await dyn({ version: 3, filters: { tags: {} } }),
      unknownKey: await dyn({ version: 3, filters: { favourite: 'x' } }),
      unknownNestedKey: await dyn({ version: 3, filters: { tags: { some: ['a'] } } }),
      extraKey: await dyn({ version: 3, filters: { name: 'a' }, operator: 'AND' }),
      segmentId: await dyn({ version: 3, filters: { segment_id: stat.body.data.id } }),
      phoneWithoutDigits: await dyn({ version: 3, filters: { phone: 'abc' } }),
      legacyUnknownField: await dyn({ operator: 'AND', conditions: [{ field: 'shoe_size', operator: 'equals', value: '9' }] }),
      legacyUnknownOperator: await dyn({ operator: 'AND', conditions: [{ field: 'name', operator: 'sounds_like', value: 'a' }] }),
    };
    const ignoredOnStatic = [
      await call('POST', '/segments', { name: 'S', type: 'static', rules: { operator: 'AND', conditions: [{ field: 'name', operator: 'equals', value: 'a' }] } }),
      await call('POST', '/segments', { name: 'S', type: 'static', rules: null }),
      await call('POST', '/segments', { name: 'S', type: 'static', rules: {} }),
    ];
    const missingName = await call('POST', '/segments', { type: 'static' });

    // Assess
    for (const [cause, res] of Object.entries(causes)) expect([cause, isRuleError(res)]).toEqual([cause, true]);
    for (const res of ignoredOnStatic) expect(res.body.data).toMatchObject({ type: 'static', rules: null, rulesFormat: null });
    expect(isFormatError(missingName)).toBe(true);
    expect(missingName.body.details).toEqual([{ field: 'name', message: 'name is required' }]);
  });

  it('stores v3 filters in snake_case, accepting the camelCase spelling of a known key', async () => {
    // Prepare
    const { apiKey } = await newTenant();
    const call = client(apiKey);
    await call('POST', '/contacts/v1', { phone_number: '+5215512340003', name: 'Cami' });

    // Act
    const camel = await call('POST', '/segments', { name: 'New', type: 'dynamic', rules: { version: 3, filters: { createdAt: { withinDays: 1 }, optedOut: false } } });
    const patched = await call('PATCH', `/segments/${camel.body.data.id}`, { rules: { version: 3, filters: { lastContactAt: { olderThanDays: 30 } } } });
    const twice = await call('POST', '/segments', { name: 'Twice', type: 'dynamic', rules: { version: 3, filters: { created_at: { within_days: 1 }, createdAt: { within_days: 2 } } } });

    // Assess
    expect(camel.status).toBe(201);
    expect(camel.body.data).toMatchObject({ contactCount: 1, rulesFormat: 'filters' });
    expect(camel.body.data.rules).toEqual({ version: 3, filters: { created_at: { within_days: 1 }, opted_out: false } });
    expect(camel.body.data.filters).toEqual({ created_at: { within_days: 1 }, opted_out: false });
    expect(patched.body.data.rules).toEqual({ version: 3, filters: { last_contact_at: { older_than_days: 30 } } });
    expect(isRuleError(twice)).toBe(true);
  });

  it('previews v1, v2 and v3 rules without storing, and 404s a missing, foreign or non-UUID segment alike', async () => {
    // Prepare
    const { apiKey } = await newTenant();
    const other = await newTenant();
    const call = client(apiKey);
    await call('POST', '/contacts/v1', { phone_number: '+5215512340002', name: 'Beto', tags: ['lead'] });
    const foreign = await client(other.apiKey)('POST', '/segments', { name: 'Theirs', type: 'static' });

    // Act
    const v3 = await call('POST', '/segments/preview', { rules: { version: 3, filters: { tags: { any: ['lead'] } } } });
    const v1 = await call('POST', '/segments/preview', { rules: { operator: 'OR', conditions: [{ field: 'tags', operator: 'contains', value: 'lead' }] } });
    const v2 = await call('POST', '/segments/preview', { rules: { version: 2, operator: 'OR', groups: [{ conditions: [{ field: 'tags', operator: 'contains', value: 'lead' }] }] } });
    const after = await call('GET', '/segments');
    const notFound = [
      await call('GET', `/segments/${MISSING}`),
      await call('GET', `/segments/${foreign.body.data.id}`),
      await call('GET', '/segments/not-a-uuid'),
      await call('PATCH', `/segments/${foreign.body.data.id}`, { name: 'mine now' }),
      await call('DELETE', `/segments/${foreign.body.data.id}`),
      await call('POST', `/segments/${foreign.body.data.id}/members`, { action: 'add', search: 'a' }),
      await call('POST', '/segments/not-a-uuid/members', { action: 'add', search: 'a' }),
    ];

    // Assess
    for (const res of [v3, v1, v2]) {
      expect(res.status).toBe(200);
      expect(res.body.data.count).toBe(1);
      expect(res.body.data.preview).toHaveLength(1);
    }
    expect(after.body.data).toEqual([]);
    for (const res of notFound) expect(res).toEqual({ status: 404, body: { error: 'not_found', message: 'Segment not found' } });
  });
});

describe('segments: bulk members', () => {
  it('adds and removes by ids and by search selection, idempotently, with the contract response fields', async () => {
    // Prepare
    const { apiKey } = await newTenant();
    const call = client(apiKey);
    const ids: string[] = [];
    for (const [i, name] of ['Carla', 'Carlos', 'Diana'].entries()) {
      ids.push((await call('POST', '/contacts/v1', { phone_number: `+521551234001${i}`, name })).body.contact.id);
    }
    const seg = (await call('POST', '/segments', { name: 'S', type: 'static' })).body.data.id;
    const other = (await call('POST', '/segments', { name: 'T', type: 'static' })).body.data.id;

    // Act
    const added = await call('POST', `/segments/${seg}/members`, { action: 'add', contactIds: [ids[0], ids[0], ids[1]] });
    const again = await call('POST', `/segments/${seg}/members`, { action: 'add', contactIds: [ids[0], ids[1]] });
    const bySearch = await call('POST', `/segments/${other}/members`, { action: 'add', search: 'carl' });
    const bySegment = await call('POST', `/segments/${other}/members`, { action: 'add', filters: { segment_id: seg, name: 'diana' } });
    const removed = await call('POST', `/segments/${seg}/members`, { action: 'remove', filters: { name: 'carla' } });
    const search200 = await call('POST', `/segments/${seg}/members`, { action: 'add', search: 'x'.repeat(200) });
    const max = await call('POST', `/segments/${seg}/members`, { action: 'add', contactIds: Array.from({ length: 10_000 }, () => ids[1]) });
    const addedById = await call('POST', `/segments/${seg}/contacts`, { contactIds: [ids[2]] });
    const addedOne = await call('POST', `/segments/${other}/contacts`, { contactId: ids[2] });
    const removedOne = await call('DELETE', `/segments/${other}/contacts/${ids[0]}`);

    // Assess
    expect(added.body).toEqual({ data: { action: 'add', affected: 2, contactIds: expect.arrayContaining([ids[0], ids[1]]), contactCount: 2, countStale: false } });
    expect(again.body.data).toMatchObject({ action: 'add', affected: 0, contactIds: [], contactCount: 2 });
    expect(bySearch.body.data).toMatchObject({ affected: 2, contactCount: 2 });
    expect(bySegment.body.data).toMatchObject({ affected: 0, contactCount: 2 });
    expect(removed.body.data).toMatchObject({ action: 'remove', affected: 1, contactIds: [ids[0]], contactCount: 1 });
    expect(search200.status).toBe(200);
    expect(max.body.data).toMatchObject({ action: 'add', affected: 0, contactIds: [] });
    expect(addedById.body.data).toMatchObject({ action: 'add', affected: 1, contactIds: [ids[2]], contactCount: 2 });
    expect(addedOne.body.data).toMatchObject({ action: 'add', affected: 1, contactIds: [ids[2]], contactCount: 3 });
    expect(removedOne.body.data).toMatchObject({ action: 'remove', affected: 1, contactCount: 2 });
  });

  it('counts only active contacts on add: a soft-deleted contact id is accepted but not added', async () => {
    // Prepare
    const { apiKey } = await newTenant();
    const call = client(apiKey);
    const kept = (await call('POST', '/contacts/v1', { phone_number: '+5215512340040', name: 'Hugo' })).body.contact.id;
    const gone = (await call('POST', '/contacts/v1', { phone_number: '+5215512340041', name: 'Ines' })).body.contact.id;
    await call('DELETE', `/contacts/v1/${gone}`);
    const seg = (await call('POST', '/segments', { name: 'S', type: 'static' })).body.data.id;

    // Act
    const added = await call('POST', `/segments/${seg}/members`, { action: 'add', contactIds: [kept, gone] });

    // Assess
    expect(added.status).toBe(200);
    expect(added.body.data).toEqual({ action: 'add', affected: 1, contactIds: [kept], contactCount: 1, countStale: false });
  });

  it('answers every members 400 cause, and applies nothing when one id is unknown or foreign', async () => {
    // Prepare
    const { apiKey } = await newTenant();
    const other = await newTenant();
    const call = client(apiKey);
    const mine = (await call('POST', '/contacts/v1', { phone_number: '+5215512340020', name: 'Eva' })).body.contact.id;
    const theirs = (await client(other.apiKey)('POST', '/contacts/v1', { phone_number: '+5215512340021', name: 'Fer' })).body.contact.id;
    const seg = (await call('POST', '/segments', { name: 'S', type: 'static' })).body.data.id;
    const dyn = (await call('POST', '/segments', { name: 'D', type: 'dynamic', rules: { version: 3, filters: { name: 'eva' } } })).body.data.id;
    const members = (body: unknown, id = seg) => call('POST', `/segments/${id}/members`, body);

    // Act
    const causes = {
      dynamicSegment: await members({ action: 'add', contactIds: [mine] }, dyn),
      missingAction: await members({ contactIds: [mine] }),
      unknownAction: await members({ action: 'toggle', contactIds: [mine] }),
      extraField: await members({ action: 'add', contactIds: [mine], force: true }),
      emptyContactIds: await members({ action: 'add', contactIds: [] }),
      oversizedContactIds: await members({ action: 'add', contactIds: Array.from({ length: 10_001 }, () => mine) }),
      bothForms: await members({ action: 'add', contactIds: [mine], search: 'eva' }),
      neitherForm: await members({ action: 'add' }),
      unknownId: await members({ action: 'add', contactIds: [mine, MISSING] }),
      foreignId: await members({ action: 'add', contactIds: [mine, theirs] }),
      invalidFilters: await members({ action: 'add', filters: { name: { like: 'eva' } } }),
      emptyFilters: await members({ action: 'add', filters: {} }),
      emptySearch: await members({ action: 'add', search: '' }),
      blankSearch: await members({ action: 'add', search: '   ' }),
      longSearch: await members({ action: 'add', search: 'x'.repeat(201) }),
    };
    const detail = await call('GET', `/segments/${seg}`);

    // Assess
    for (const [cause, res] of Object.entries(causes)) expect([cause, res.status, typeof res.body.error]).toEqual([cause, 400, 'string']);
    expect(detail.body.data.contactCount).toBe(0);
  });
});

describe('webhooks: subscriptions, events, headers and signatures', () => {
  it('emits the funnel and contact events with the payload fields of the table, signed as the contract says', async () => {
    // Prepare
    const own = await startReceiver();
    try {
      const { apiKey, phoneNumberId } = await newTenant();
      const call = client(apiKey);
      const sub = await call('POST', '/user-webhooks', { name: 'all', url: own.url, events: ['*'] });
      const secret = sub.body.data.secret as string;

      // Act
      const a = (await call('POST', '/funnel/v1/stages', { name: 'Nuevo' })).body.stage;
      const b = (await call('POST', '/funnel/v1/stages', { name: 'Ganado', color: '#00ff00' })).body.stage;
      await call('PATCH', `/funnel/v1/stages/${a.id}`, { name: 'Nuevo lead' });
      await call('PATCH', '/funnel/v1/stages/reorder', { stage_ids: [b.id, a.id] });
      const contact = (await call('POST', '/contacts/v1', { phone_number: '+5215512340030', name: 'Gil' })).body.contact;
      await call('POST', `/funnel/v1/contacts/${contact.id}/move`, { stage_id: b.id });
      await call('POST', `/funnel/v1/contacts/${contact.id}/move`, { stage_id: null });
      await call('DELETE', `/funnel/v1/stages/${a.id}`);
      await fetch(`${stack.sandboxUrl}/__sandbox/inbound`, {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ from: '+5215512340031', text: 'hola', phone_number_id: phoneNumberId }),
      });
      // Every event the table names (the inbound message also creates a contact and a conversation, and may get an AI reply).
      const expected = ['funnel_stage.created', 'funnel_stage.updated', 'funnel_stages.reordered', 'contact.created', 'contact.stage_changed', 'funnel_stage.deleted', 'message.received'];
      const deadline = Date.now() + 30_000;
      while (!expected.every((name) => own.received.some((r) => JSON.parse(r.body).event === name)) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
      }
      await stack.queues.idle();

      // Assess
      const events = own.received.map((r) => JSON.parse(r.body) as { event: string; data: any });
      const got = (name: string) => events.filter((e) => e.event === name).map((e) => e.data);
      expect(got('funnel_stage.created')).toEqual([
        { stage_id: a.id, name: 'Nuevo', position: 0, color: '#6366f1', created_at: expect.any(String) },
        { stage_id: b.id, name: 'Ganado', position: 1, color: '#00ff00', created_at: expect.any(String) },
      ]);
      expect(got('funnel_stage.updated')).toEqual([{ stage_id: a.id, name: 'Nuevo lead', color: '#6366f1', updated_at: expect.any(String) }]);
      expect(got('funnel_stages.reordered')).toEqual([{ stage_ids: [b.id, a.id], reordered_at: expect.any(String) }]);
      expect(got('contact.stage_changed')).toEqual([
        { contact_id: contact.id, phone_number: '+5215512340030', previous_stage_id: null, previous_stage_name: null, new_stage_id: b.id, new_stage_name: 'Ganado', moved_at: expect.any(String) },
        { contact_id: contact.id, phone_number: '+5215512340030', previous_stage_id: b.id, previous_stage_name: 'Ganado', new_stage_id: null, new_stage_name: null, moved_at: expect.any(String) },
      ]);
      expect(got('funnel_stage.deleted')).toEqual([expect.objectContaining({ stage_id: a.id })]);
      expect(got('contact.created').map((d) => d.contact_id)).toContain(contact.id);
      const received = got('message.received');
      expect(received).toHaveLength(1);
      expect(received[0].messages[0]).toMatchObject({ id: expect.any(String), from: expect.stringContaining('5215512340031'), text: { body: 'hola' } });

      for (const r of own.received) {
        const parsed = JSON.parse(r.body);
        expect(Object.keys(parsed)).toEqual(['event', 'data']);
        expect(JSON.stringify(parsed)).toBe(r.body);
        expect(r.headers['x-webhook-signature']).toBe(createHmac('sha256', secret).update(r.body).digest('hex'));
        expect(verifyHex(r.body, r.headers['x-webhook-signature'], secret)).toBe(true);
        expect(r.headers['x-webhook-event']).toBe(parsed.event);
        expect(new Date(String(r.headers['x-webhook-timestamp'])).toISOString()).toBe(r.headers['x-webhook-timestamp']);
        expect(r.headers['x-webhook-id']).toEqual(expect.any(String));
        expect(r.headers['webhook-id']).toBe(r.headers['x-webhook-id']);
        expect(String(r.headers['webhook-timestamp'])).toMatch(/^\d+$/);
        expect(String(r.headers['webhook-signature'])).toMatch(/^v1,/);
        expect(verifyStandard(r, secret)).toBe(true);
      }
      expect(new Set(own.received.map((r) => r.headers['x-webhook-id'])).size).toBe(own.received.length);
    } finally {
      await own.close();
    }
  }, 45_000);

  it('delivers only subscribed events, and signs with the regenerated secret at once (the old one stops verifying)', async () => {
    // Prepare
    const { apiKey } = await newTenant();
    const call = client(apiKey);
    const only = await call('POST', '/user-webhooks', { name: 'stages only', url: receiver.url, events: ['funnel_stage.created'] });
    const oldSecret = only.body.data.secret as string;

    // Act
    const regenerated = await call('POST', `/user-webhooks/${only.body.data.id}/regenerate-secret`);
    const stage = (await call('POST', '/funnel/v1/stages', { name: 'Rotado' })).body.stage;
    await call('PATCH', `/funnel/v1/stages/${stage.id}`, { name: 'Rotado 2' });
    const shown = await call('GET', `/user-webhooks/${only.body.data.id}`);
    await stack.queues.idle();

    // Assess
    expect(only.status).toBe(201);
    expect(Object.keys(only.body.data).sort()).toEqual(['createdAt', 'events', 'id', 'name', 'secret', 'url']);
    expect(only.body.data).toMatchObject({ name: 'stages only', url: receiver.url, events: ['funnel_stage.created'] });
    expect(regenerated.status).toBe(200);
    const newSecret = regenerated.body.data.secret as string;
    expect(newSecret).toEqual(expect.any(String));
    expect(newSecret).not.toBe(oldSecret);
    expect(shown.body.data).not.toHaveProperty('secret');
    const got = receiver.received.filter((r) => r.body.includes(stage.id));
    expect(got.map((r) => JSON.parse(r.body).event)).toEqual(['funnel_stage.created']);
    expect(verifyHex(got[0].body, got[0].headers['x-webhook-signature'], newSecret)).toBe(true);
    expect(verifyHex(got[0].body, got[0].headers['x-webhook-signature'], oldSecret)).toBe(false);
  });

  it('answers the management operations of decisions.md, 404 for an unknown id and 403 for another account\'s', async () => {
    // Prepare
    const { apiKey } = await newTenant();
    const other = await newTenant();
    const call = client(apiKey);
    const own = await startReceiver();
    try {
      const id = (await call('POST', '/user-webhooks', { name: 'mgmt', url: own.url, events: ['contact.created'] })).body.data.id;
      const foreign = (await client(other.apiKey)('POST', '/user-webhooks', { name: 'theirs', url: own.url, events: ['*'] })).body.data.id;

      // Act
      const list = await call('GET', '/user-webhooks');
      const patched = await call('PATCH', `/user-webhooks/${id}`, { name: 'renamed', events: ['contact.created', 'contact.updated'] });
      const tested = await call('POST', `/user-webhooks/${id}/test`);
      const deliveries = await call('GET', `/user-webhooks/${id}/deliveries`);
      const redelivered = await call('POST', `/user-webhooks/${id}/deliveries/${deliveries.body.data[0].id}/redeliver`);
      await stack.queues.idle();
      const missing = await call('GET', `/user-webhooks/${MISSING}`);
      const theirs = await call('GET', `/user-webhooks/${foreign}`);
      const removed = await call('DELETE', `/user-webhooks/${id}`);
      const gone = await call('GET', `/user-webhooks/${id}`);

      // Assess
      expect(list.status).toBe(200);
      expect(list.body.data.map((s: any) => s.id)).toEqual([id]);
      expect(list.body.data[0]).not.toHaveProperty('secret');
      expect(patched.body.data).toMatchObject({ id, name: 'renamed', events: ['contact.created', 'contact.updated'] });
      expect(tested.status).toBe(200);
      expect(tested.body.data.success).toBe(true);
      expect(own.received[0].headers['x-webhook-event']).toBe('webhook.test');
      expect(deliveries.body.data).toHaveLength(1);
      expect(redelivered.status).toBe(202); // queued: the delivery is sent again by the worker
      expect(own.received).toHaveLength(2);
      expect(own.received[1].headers['x-webhook-id']).toBe(own.received[0].headers['x-webhook-id']);
      expect(missing.status).toBe(404);
      expect(missing.body.error).toBe('not_found');
      expect(theirs.status).toBe(403);
      expect(theirs.body.error).toBe('forbidden');
      expect(removed.status).toBe(200);
      expect(gone.status).toBe(404);
    } finally {
      await own.close();
    }
  });

  it('refuses a subscription to an unknown event name with a 400', async () => {
    // Prepare
    const { apiKey } = await newTenant();
    const call = client(apiKey);

    // Act
    const unknown = await call('POST', '/user-webhooks', { name: 'w', url: receiver.url, events: ['contact.exploded'] });
    const noEvents = await call('POST', '/user-webhooks', { name: 'w', url: receiver.url });

    // Assess
    expect(unknown.status).toBe(400);
    expect(noEvents.status).toBe(400);
  });
});
