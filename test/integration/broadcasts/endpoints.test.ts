/**
 * The broadcast endpoints through API Gateway events against DynamoDB Local (no worker runs here: the
 * start message stays in the SQS stand-in, a scheduled start in the Scheduler stand-in), and the delivery-status hook.
 */
import { randomUUID } from 'node:crypto';
import { startQueueSink, type QueueSink } from '../../support/queues.ts';
import { startUpstream } from './upstream.ts';

const upstream = await startUpstream() as Awaited<ReturnType<typeof startUpstream>> & { state: { sent: { to: string }[] } };
const { invoke, newTenant } = await import('../../support/api.ts');
const { transition } = await import('#shared/broadcasts/repository.ts');
const { putRecipients, settleRecipient, claimRecipient } = await import('#shared/broadcasts/recipients.ts');
const { addCounts } = await import('#shared/broadcasts/counts.ts');
const { onMessageStatus } = await import('#shared/broadcasts/status.ts');

let queues: QueueSink;
beforeAll(async () => {
  queues = await startQueueSink();
});
afterAll(async () => {
  await queues?.close();
  await upstream.close();
});

const scheduleOf = (broadcastId: string) => queues.scheduler.list().find((s) => s.name === `broadcast-${broadcastId}`);

const template = { templateName: 'order_update', template_parameters: ['{{contact.name}}', 'A-1'] };
const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString();

describe('POST /broadcasts/v1', () => {
  it('answers 503 and leaves the broadcast failed, not running, when its start cannot be queued', async () => {
    // Prepare: the broadcasts queue's URL names a queue the SQS stand-in does not have
    const t = await newTenant(['messages:write', 'messages:read']);
    const url = process.env.QUEUE_URL_BROADCASTS!;
    process.env.QUEUE_URL_BROADCASTS = `${url}-gone`;

    // Act
    let res: Awaited<ReturnType<typeof invoke>>;
    try {
      res = await invoke('POST /broadcasts/v1', { apiKey: t.apiKey, body: { name: 'Lost start', ...template, contact_ids: [randomUUID()] } });
    } finally {
      process.env.QUEUE_URL_BROADCASTS = url;
    }

    // Assess
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ error: 'service_unavailable', message: expect.stringContaining('nothing was sent'), broadcast_id: expect.any(String) });
    const stored = await invoke('GET /broadcasts/v1/{id}', { apiKey: t.apiKey, params: { id: res.body.broadcast_id } });
    expect(stored.status).toBe(200);
    expect(stored.body.data).toEqual(expect.objectContaining({ status: 'failed', error: expect.objectContaining({ error: 'start_failed' }), failed_at: expect.any(String) }));
    expect(queues.bodies('broadcasts').filter((m) => m.broadcastId === res.body.broadcast_id)).toEqual([]);
  });

  it('creates a broadcast to a contact list, answers 201 with the Broadcast and queues its start', async () => {
    // Prepare
    const t = await newTenant(['messages:write']);
    const ids = [randomUUID(), randomUUID()];

    // Act
    const res = await invoke('POST /broadcasts/v1', { apiKey: t.apiKey, body: { name: ' Spring sale ', ...template, contact_ids: [...ids, ids[0]] } });

    // Assess
    expect(res.status).toBe(201);
    expect(res.body.data).toEqual({
      id: expect.any(String),
      name: 'Spring sale',
      status: 'running',
      template: expect.objectContaining({ type: 'template', templateName: 'order_update', template_parameters: ['{{contact.name}}', 'A-1'] }),
      audience: { type: 'contacts', contact_count: 2 },
      send_at: null,
      pace_per_minute: expect.any(Number),
      counts: { total: 0, pending: 0, sent: 0, delivered: 0, read: 0, failed: 0, skipped: 0, cancelled: 0 },
      error: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
      started_at: null,
      completed_at: null,
      cancelled_at: null,
      failed_at: null,
    });
    const start = queues.bodies('broadcasts').find((m) => m.broadcastId === res.body.data.id);
    expect(start).toEqual({ type: 'start', businessId: t.businessId, broadcastId: res.body.data.id });
  });

  it('accepts the full template form and a future send_at (scheduled, not started)', async () => {
    const t = await newTenant(['messages:write']);
    const sendAt = inAnHour();
    const res = await invoke('POST /broadcasts/v1', {
      apiKey: t.apiKey,
      body: {
        name: 'Later',
        template: { name: 'order_update', language: { code: 'es_MX' }, components: [{ type: 'body', parameters: [{ type: 'text', text: '{{contact.first_name|amigo}}' }, { type: 'text', text: 'A-2' }] }] },
        audience: { contact_ids: [randomUUID()] },
        send_at: sendAt,
      },
    });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ status: 'scheduled', send_at: sendAt, template: { template: { name: 'order_update' } } });
    expect(queues.bodies('broadcasts').some((m) => m.broadcastId === res.body.data.id)).toBe(false);
    // The start is an EventBridge schedule (through @aws-sdk/client-scheduler) targeting the broadcasts queue.
    expect(scheduleOf(res.body.data.id)).toMatchObject({
      at: new Date(Math.ceil(Date.parse(sendAt) / 1000) * 1000),
      actionAfterCompletion: 'DELETE',
      target: { arn: queues.sqs.queueArn('broadcasts'), roleArn: process.env.BROADCAST_SCHEDULER_ROLE_ARN },
    });
    expect(JSON.parse(scheduleOf(res.body.data.id)!.target.input)).toEqual({ type: 'start', businessId: t.businessId, broadcastId: res.body.data.id });
  });

  it.each([
    ['no template', { name: 'x', contact_ids: [randomUUID()] }, 'templateName'],
    ['both template forms', { name: 'x', templateName: 'a', template: { name: 'a', language: { code: 'es_MX' } }, contact_ids: [randomUUID()] }, 'templateName'],
    ['no audience', { name: 'x', ...template }, 'audience'],
    ['two audiences', { name: 'x', ...template, contact_ids: [randomUUID()], segment_id: randomUUID() }, 'audience'],
    ['the same audience twice, at the top and in audience', { name: 'x', ...template, contact_ids: [randomUUID()], audience: { contact_ids: [randomUUID()] } }, 'audience'],
    ['an unknown segment', { name: 'x', ...template, segment_id: randomUUID() }, 'segment_id'],
    ['contact ids that are not UUIDs', { name: 'x', ...template, contact_ids: ['nope'] }, 'contact_ids.0'],
    ['an empty contact list', { name: 'x', ...template, contact_ids: [] }, 'contact_ids'],
    ['a past send_at', { name: 'x', ...template, contact_ids: [randomUUID()], send_at: '2020-01-01T00:00:00Z' }, 'send_at'],
    ['a send_at beyond 30 days', { name: 'x', ...template, contact_ids: [randomUUID()], send_at: new Date(Date.now() + 31 * 86_400_000).toISOString() }, 'send_at'],
    ['a send_at without a time zone', { name: 'x', ...template, contact_ids: [randomUUID()], send_at: '2099-01-01T10:00:00' }, 'send_at'],
    ['no name', { ...template, contact_ids: [randomUUID()] }, 'name'],
    ['a non-template type', { name: 'x', type: 'text', ...template, contact_ids: [randomUUID()] }, 'type'],
    ['bad template parameters', { name: 'x', templateName: 'a', template_parameters: 'nope', contact_ids: [randomUUID()] }, 'template_parameters'],
    ['a placeholder that names no contact field (it would reach customers as written)', { name: 'x', templateName: 'order_update', template_parameters: ['{{contact.foo}}', 'b'], contact_ids: [randomUUID()] }, 'template'],
    ['a placeholder that does not close', { name: 'x', templateName: 'order_update', template_parameters: ['{{contact.name', 'b'], contact_ids: [randomUUID()] }, 'template'],
  ])('answers 400 validation_error for %s', async (_label, body, field) => {
    const t = await newTenant(['messages:write']);
    const res = await invoke('POST /broadcasts/v1', { apiKey: t.apiKey, body });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'validation_error', message: expect.any(String) });
    expect(Object.keys(res.body.details)).toContain(field);
  });

  it.each([['2099-02-30T10:00:00Z'], ['2099-11-31T10:00:00Z'], ['2099-12-10T24:00:00Z']])('refuses a send_at the calendar does not have (%s), never rolling it over', async (sendAt) => {
    const t = await newTenant(['messages:write']);
    const res = await invoke('POST /broadcasts/v1', { apiKey: t.apiKey, body: { name: 'x', ...template, contact_ids: [randomUUID()], send_at: sendAt } });
    expect([res.status, res.body.details?.send_at]).toEqual([400, ['send_at must be an ISO 8601 date-time with a time zone, e.g. 2026-01-31T15:00:00Z']]);
  });

  it("refuses a template the approved one does not fit, as a send would, with 400 invalid_template_parameters and stores nothing", async () => {
    // Prepare: order_update has 2 body placeholders; promo_header an image header and 1 placeholder.
    const t = await newTenant(['messages:write', 'messages:read']);
    const bodies = [
      { templateName: 'order_update', template_parameters: ['solo uno'] },
      { templateName: 'order_update', template_parameters: ['{{contact.name}}'], send_at: inAnHour() },
      { templateName: 'promo_header', template_parameters: ['{{contact.first_name}}'] },
      { template: { name: 'order_update', language: { code: 'es_MX' }, components: [{ type: 'body', parameters: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }, { type: 'text', text: 'c' }] }] } },
    ];

    // Act
    const answers = await Promise.all(bodies.map((b, i) => invoke('POST /broadcasts/v1', { apiKey: t.apiKey, body: { name: `Wrong ${i}`, ...b, contact_ids: [randomUUID()] } })));
    const list = await invoke('GET /broadcasts/v1', { apiKey: t.apiKey });

    // Assess
    expect(answers.map((r) => [r.status, r.body.error])).toEqual(Array(4).fill([400, 'invalid_template_parameters']));
    expect(answers[0].body.details).toMatchObject({ template_name: 'order_update', expected: 2, received: 1 });
    expect(list.body.data).toEqual([]);
  });

  it('answers 400 invalid_json for a body that is not JSON, 401 without a key, 403 without messages:write', async () => {
    const t = await newTenant(['messages:read']);
    expect((await invoke('POST /broadcasts/v1', { apiKey: t.apiKey, rawBody: '{nope' })).status).toBe(403);
    const w = await newTenant(['messages:write']);
    expect((await invoke('POST /broadcasts/v1', { apiKey: w.apiKey, rawBody: '{nope' })).body.error).toBe('invalid_json');
    expect((await invoke('POST /broadcasts/v1', { body: {} })).status).toBe(401);
  });
});

describe('GET /broadcasts/v1, GET /broadcasts/v1/{id}, recipients, cancel', () => {
  const create = async (apiKey: string, name: string, extra: Record<string, unknown> = {}) =>
    (await invoke('POST /broadcasts/v1', { apiKey, body: { name, ...template, contact_ids: [randomUUID()], send_at: inAnHour(), ...extra } })).body.data;

  it('lists newest first with a cursor, filters by status, and refuses a cursor of another business', async () => {
    // Prepare
    const t = await newTenant(['messages:write', 'messages:read']);
    const other = await newTenant(['messages:write', 'messages:read']);
    const a = await create(t.apiKey, 'A');
    const b = await create(t.apiKey, 'B');
    const c = await create(t.apiKey, 'C');
    await create(other.apiKey, 'other');
    await invoke('POST /broadcasts/v1/{id}/cancel', { apiKey: t.apiKey, params: { id: b.id } });

    // Act
    const first = await invoke('GET /broadcasts/v1', { apiKey: t.apiKey, query: { limit: '2' } });
    const second = await invoke('GET /broadcasts/v1', { apiKey: t.apiKey, query: { limit: '2', cursor: first.body.next_cursor } });
    const cancelled = await invoke('GET /broadcasts/v1', { apiKey: t.apiKey, query: { status: 'cancelled' } });
    const otherFirst = await invoke('GET /broadcasts/v1', { apiKey: other.apiKey, query: { limit: '1' } });
    // A page carries each broadcast's template (up to 64 KB): 50 at most, within Lambda's 6 MB.
    const tooMany = await invoke('GET /broadcasts/v1', { apiKey: t.apiKey, query: { limit: '51' } });
    expect([tooMany.status, tooMany.body.error]).toEqual([400, 'validation_error']);
    const forged = await invoke('GET /broadcasts/v1', { apiKey: t.apiKey, query: { cursor: otherFirst.body.next_cursor ?? Buffer.from(JSON.stringify({ pk: `B#${other.businessId}`, sk: 'x', gsi1pk: 'y', gsi1sk: 'z' })).toString('base64url') } });

    // Assess
    expect(first.status).toBe(200);
    expect(first.body.data.map((x: any) => x.id)).toEqual([c.id, b.id]);
    expect(second.body.data.map((x: any) => x.id)).toEqual([a.id]);
    expect(second.body.next_cursor).toBeNull();
    expect(cancelled.body.data.map((x: any) => x.id)).toEqual([b.id]);
    // A last page that is exactly full ends the list, with a status filter too.
    const all = await invoke('GET /broadcasts/v1', { apiKey: t.apiKey, query: { limit: '3' } });
    const oneCancelled = await invoke('GET /broadcasts/v1', { apiKey: t.apiKey, query: { status: 'cancelled', limit: '1' } });
    expect([all.body.data.length, all.body.next_cursor, oneCancelled.body.data.length, oneCancelled.body.next_cursor]).toEqual([3, null, 1, null]);
    expect(forged.status).toBe(400);
    expect((await invoke('GET /broadcasts/v1', { apiKey: t.apiKey, query: { cursor: 'garbage' } })).status).toBe(400);
    expect((await invoke('GET /broadcasts/v1', { apiKey: t.apiKey, query: { status: 'weird' } })).status).toBe(400);
  });

  it("gets one broadcast; 404 for an unknown id or a non-UUID, 403 for another business's (read, recipients, cancel) and without messages:read", async () => {
    const t = await newTenant(['messages:write', 'messages:read']);
    const other = await newTenant(['messages:write', 'messages:read']);
    const mine = await create(t.apiKey, 'Mine');
    const theirs = await create(other.apiKey, 'Theirs');
    expect((await invoke('GET /broadcasts/v1/{id}', { apiKey: t.apiKey, params: { id: mine.id } })).body.data).toMatchObject({ id: mine.id, name: 'Mine' });
    for (const id of [randomUUID(), 'not-a-uuid']) {
      const res = await invoke('GET /broadcasts/v1/{id}', { apiKey: t.apiKey, params: { id } });
      expect([res.status, res.body.error]).toEqual([404, 'not_found']);
    }
    // The contract: a resource of another account is 403 (only segments answer 404 for both).
    for (const route of ['GET /broadcasts/v1/{id}', 'GET /broadcasts/v1/{id}/recipients', 'POST /broadcasts/v1/{id}/cancel'] as const) {
      const res = await invoke(route, { apiKey: t.apiKey, params: { id: theirs.id } });
      expect([route, res.status, res.body.error]).toEqual([route, 403, 'forbidden']);
    }
    expect((await invoke('GET /broadcasts/v1/{id}', { apiKey: other.apiKey, params: { id: theirs.id } })).body.data).toMatchObject({ status: expect.any(String) });
    const writer = await newTenant(['messages:write']);
    expect((await invoke('GET /broadcasts/v1/{id}', { apiKey: writer.apiKey, params: { id: mine.id } })).status).toBe(403);
  });

  it('cancels a scheduled broadcast once, with its end event; a second cancel is 400 invalid_state', async () => {
    const t = await newTenant(['messages:write', 'messages:read']);
    const b = await create(t.apiKey, 'Cancel me');
    expect(scheduleOf(b.id)).toBeDefined();
    const res = await invoke('POST /broadcasts/v1/{id}/cancel', { apiKey: t.apiKey, params: { id: b.id } });
    expect(res.status).toBe(200);
    expect(scheduleOf(b.id)).toBeUndefined();
    expect(res.body.data).toMatchObject({ id: b.id, status: 'cancelled', cancelled_at: expect.any(String) });
    const again = await invoke('POST /broadcasts/v1/{id}/cancel', { apiKey: t.apiKey, params: { id: b.id } });
    // Subscribers learn the broadcast ended: the end event, once, with status cancelled.
    const ends = queues.bodies('events').filter((e) => e.businessId === t.businessId && e.event === 'broadcast.completed');
    expect(ends.map((e) => e.data)).toEqual([expect.objectContaining({ broadcast_id: b.id, status: 'cancelled', cancelled_at: res.body.data.cancelled_at, counts: expect.any(Object) })]);
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ error: 'invalid_state', message: expect.any(String) });
    expect((await invoke('POST /broadcasts/v1/{id}/cancel', { apiKey: t.apiKey, params: { id: randomUUID() } })).status).toBe(404);
  });

  it('refuses a scheduled broadcast past 100 waiting with 400 broadcast_limit_reached; an immediate one still goes, and a cancel makes room', async () => {
    // Prepare: 100 broadcasts waiting for their send_at
    const t = await newTenant(['messages:write', 'messages:read']);
    const waiting: string[] = [];
    for (let i = 0; i < 100; i += 10) {
      waiting.push(...(await Promise.all(Array.from({ length: 10 }, (_, k) => create(t.apiKey, `Waiting ${i + k}`)))).map((b) => b.id));
    }

    // Act: with a second key of the business (the first has used its 100 requests of the minute)
    const { createApiKey } = await import('#shared/auth/api-keys.ts');
    const { apiKey } = await createApiKey(t.businessId, ['messages:write']);
    const schedules = queues.scheduler.list().length;
    const refused = await invoke('POST /broadcasts/v1', { apiKey, body: { name: 'One too many', ...template, contact_ids: [randomUUID()], send_at: inAnHour() } });
    const schedulesAfterRefusal = queues.scheduler.list().length;
    const immediate = await invoke('POST /broadcasts/v1', { apiKey, body: { name: 'Now', ...template, contact_ids: [randomUUID()] } });
    expect((await invoke('POST /broadcasts/v1/{id}/cancel', { apiKey, params: { id: waiting[0] } })).status).toBe(200);
    const afterCancel = await invoke('POST /broadcasts/v1', { apiKey, body: { name: 'In its place', ...template, contact_ids: [randomUUID()], send_at: inAnHour() } });

    // Assess
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({ error: 'broadcast_limit_reached', message: expect.stringContaining('100') });
    expect(schedulesAfterRefusal).toBe(schedules);
    expect(immediate.status).toBe(201);
    expect(afterCancel.status).toBe(201);
    expect(afterCancel.body.data.status).toBe('scheduled');
  }, 60_000);

  it('holds the cap of 100 waiting broadcasts under 110 concurrent creates', async () => {
    // Prepare: keys enough for the rate limit (100 requests a minute each)
    const t = await newTenant(['messages:write', 'messages:read']);
    const { createApiKey } = await import('#shared/auth/api-keys.ts');
    const keys = await Promise.all([1, 2].map(async () => (await createApiKey(t.businessId, ['messages:write', 'messages:read'])).apiKey));
    const schedules = queues.scheduler.list().length;

    // Act
    const answers = await Promise.all(Array.from({ length: 110 }, (_, i) =>
      invoke('POST /broadcasts/v1', { apiKey: keys[i % 2], body: { name: `Race ${i}`, ...template, contact_ids: [randomUUID()], send_at: inAnHour() } })));

    // Assess: never more than 100 waiting; every refusal says why; no schedule left for a refused one
    const created = answers.filter((r) => r.status === 201);
    const refusals = answers.filter((r) => r.status !== 201).map((r) => `${r.status} ${r.body.error}`);
    expect(created.length).toBeLessThanOrEqual(100);
    expect(created.length).toBeGreaterThanOrEqual(90);
    expect(new Set(refusals).size === 0 || [...new Set(refusals)].every((x) => x === '400 broadcast_limit_reached' || x === '409 broadcast_create_conflict')).toBe(true);
    const page = async (cursor?: string) => (await invoke('GET /broadcasts/v1', { apiKey: t.apiKey, query: { status: 'scheduled', limit: '50', ...(cursor ? { cursor } : {}) } })).body;
    const waiting: unknown[] = [];
    for (let body = await page(); ; body = await page(body.next_cursor)) {
      waiting.push(...body.data);
      if (!body.next_cursor) break;
    }
    expect(waiting).toHaveLength(created.length);
    expect(queues.scheduler.list().length - schedules).toBe(created.length);
  }, 60_000);

  it('holds the cap of 100 running broadcasts under 110 concurrent creates; a scheduled one still goes, and one that finished makes room', async () => {
    // Prepare: keys enough for the rate limit (100 requests a minute each)
    const t = await newTenant(['messages:write', 'messages:read']);
    const { createApiKey } = await import('#shared/auth/api-keys.ts');
    const keys = await Promise.all([1, 2, 3].map(async () => (await createApiKey(t.businessId, ['messages:write', 'messages:read'])).apiKey));

    // Act: 110 at once (no worker runs here: every created one stays running)
    const answers = await Promise.all(Array.from({ length: 110 }, (_, i) =>
      invoke('POST /broadcasts/v1', { apiKey: keys[i % 2], body: { name: `Now ${i}`, ...template, contact_ids: [randomUUID()] } })));

    // Assess: never more than 100 running; every refusal says why
    const created = answers.filter((r) => r.status === 201);
    const refusals = [...new Set(answers.filter((r) => r.status !== 201).map((r) => `${r.status} ${r.body.error}`))];
    expect(created.length).toBeLessThanOrEqual(100);
    expect(created.length).toBeGreaterThanOrEqual(90);
    expect(refusals.every((x) => x === '400 broadcast_limit_reached' || x === '409 broadcast_create_conflict')).toBe(true);
    for (let i = created.length; i < 100; i++) {
      expect((await invoke('POST /broadcasts/v1', { apiKey: keys[2], body: { name: `Fill ${i}`, ...template, contact_ids: [randomUUID()] } })).status).toBe(201);
    }
    const refused = await invoke('POST /broadcasts/v1', { apiKey: keys[2], body: { name: 'One too many', ...template, contact_ids: [randomUUID()] } });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({ error: 'broadcast_limit_reached', message: expect.stringContaining('100 broadcasts running') });
    const scheduled = await invoke('POST /broadcasts/v1', { apiKey: keys[2], body: { name: 'Later', ...template, contact_ids: [randomUUID()], send_at: inAnHour() } });
    expect(scheduled.status).toBe(201);

    // A broadcast that ends gives its place to the next create (no write at its end: the create finds it finished).
    expect(await transition(t.businessId, created[0].body.data.id, ['running'], 'completed', { completed_at: new Date().toISOString() })).toBeDefined();
    const next = await invoke('POST /broadcasts/v1', { apiKey: keys[2], body: { name: 'In its place', ...template, contact_ids: [randomUUID()] } });
    expect(next.status).toBe(201);
    expect((await invoke('POST /broadcasts/v1', { apiKey: keys[2], body: { name: 'Full again', ...template, contact_ids: [randomUUID()] } })).status).toBe(400);
  }, 120_000);

  it('pages recipients, filters them by status, and records delivery statuses once each', async () => {
    // Prepare: a running broadcast with three recipients sent and one skipped.
    const t = await newTenant(['messages:write', 'messages:read']);
    const b = await create(t.apiKey, 'Statuses', { send_at: undefined });
    await transition(t.businessId, b.id, ['running'], 'running', { started_at: new Date().toISOString(), c_total: 4, c_skipped: 1 });
    const contacts = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    await putRecipients(t.businessId, b.id, [
      ...contacts.slice(0, 3).map((id, seq) => ({ contact_id: id, seq, state: 'pending' as const, phone_number: `+5215500000${seq}`, request: { type: 'template' } })),
      { contact_id: contacts[3], seq: 3, state: 'skipped' as const, phone_number: null, reason: 'opted_out' },
    ]);
    const messageIds = contacts.slice(0, 3).map(() => randomUUID());
    for (let i = 0; i < 3; i++) {
      await claimRecipient(t.businessId, b.id, contacts[i], 'lease', Date.now() + 60_000);
      await settleRecipient(t.businessId, b.id, contacts[i], { state: 'sent', message_id: messageIds[i], wamid: `wamid.${i}` }, 'lease');
    }
    await addCounts(t.businessId, b.id, { sent: 3 });

    // Act
    const results = [
      await onMessageStatus(t.businessId, messageIds[0], 'delivered'),
      await onMessageStatus(t.businessId, messageIds[0], 'delivered'),
      await onMessageStatus(t.businessId, messageIds[1], 'read'),
      await onMessageStatus(t.businessId, messageIds[1], 'delivered'),
      await onMessageStatus(t.businessId, messageIds[2], 'failed', { code: 131026, error: 'user_blocked' }),
      await onMessageStatus(t.businessId, randomUUID(), 'read'),
    ];

    // Assess
    expect(results).toEqual([true, false, true, false, true, false]);
    const got = (await invoke('GET /broadcasts/v1/{id}', { apiKey: t.apiKey, params: { id: b.id } })).body.data;
    expect(got.counts).toEqual({ total: 4, pending: 0, sent: 2, delivered: 2, read: 1, failed: 1, skipped: 1, cancelled: 0 });
    const page1 = await invoke('GET /broadcasts/v1/{id}/recipients', { apiKey: t.apiKey, params: { id: b.id }, query: { limit: '3' } });
    const page2 = await invoke('GET /broadcasts/v1/{id}/recipients', { apiKey: t.apiKey, params: { id: b.id }, query: { limit: '3', cursor: page1.body.next_cursor } });
    expect(page1.body.data).toHaveLength(3);
    expect(page2.body.data).toHaveLength(1);
    expect(page2.body.next_cursor).toBeNull();
    const whole = await invoke('GET /broadcasts/v1/{id}/recipients', { apiKey: t.apiKey, params: { id: b.id }, query: { limit: '4' } });
    const lastFailed = await invoke('GET /broadcasts/v1/{id}/recipients', { apiKey: t.apiKey, params: { id: b.id }, query: { status: 'failed', limit: '1' } });
    expect([whole.body.data.length, whole.body.next_cursor, lastFailed.body.data.length, lastFailed.body.next_cursor]).toEqual([4, null, 1, null]);
    const byStatus = async (status: string) =>
      (await invoke('GET /broadcasts/v1/{id}/recipients', { apiKey: t.apiKey, params: { id: b.id }, query: { status } })).body.data;
    // Each status lists what its count counts: a read recipient was also sent and delivered.
    for (const status of ['sent', 'delivered', 'read', 'failed', 'skipped', 'pending', 'cancelled']) {
      expect([status, (await byStatus(status)).length]).toEqual([status, got.counts[status]]);
    }
    const inOrder = (ids: string[]) => [...ids].sort();
    expect(inOrder((await byStatus('sent')).map((r: any) => r.contact_id))).toEqual(inOrder([contacts[0], contacts[1]]));
    expect(inOrder((await byStatus('delivered')).map((r: any) => r.contact_id))).toEqual(inOrder([contacts[0], contacts[1]]));
    expect((await byStatus('read'))[0]).toMatchObject({ contact_id: contacts[1], status: 'read', wamid: 'wamid.1', read_at: expect.any(String), delivered_at: expect.any(String) });
    expect((await byStatus('failed'))[0]).toMatchObject({ contact_id: contacts[2], error: { code: '131026', error: 'user_blocked' } });
    expect((await byStatus('skipped'))[0]).toMatchObject({ contact_id: contacts[3], reason: 'opted_out', message_id: null });
    const forged = await invoke('GET /broadcasts/v1/{id}/recipients', {
      apiKey: t.apiKey, params: { id: b.id }, query: { cursor: Buffer.from(JSON.stringify({ pk: `B#${randomUUID()}#BCAST#${b.id}`, sk: 'R#x' })).toString('base64url') },
    });
    expect(forged.status).toBe(400);
    expect((await invoke('GET /broadcasts/v1/{id}/recipients', { apiKey: t.apiKey, params: { id: randomUUID() } })).status).toBe(404);
  });

  it('lists no recipient while the audience is being frozen, until the start commits the counts, then every one of them', async () => {
    // Prepare: a running broadcast whose start has written its recipients but not yet committed (no started_at)
    const t = await newTenant(['messages:write', 'messages:read']);
    const b = await create(t.apiKey, 'Freezing', { send_at: undefined });
    const contacts = [randomUUID(), randomUUID()];
    await putRecipients(t.businessId, b.id, contacts.map((id, seq) => ({ contact_id: id, seq, state: 'pending' as const, phone_number: `+5215500001${seq}`, request: { type: 'template' } })));
    const list = async () => (await invoke('GET /broadcasts/v1/{id}/recipients', { apiKey: t.apiKey, params: { id: b.id } })).body;
    const counts = async () => (await invoke('GET /broadcasts/v1/{id}', { apiKey: t.apiKey, params: { id: b.id } })).body.data.counts;

    // Act
    const during = { list: await list(), total: (await counts()).total };
    await transition(t.businessId, b.id, ['running'], 'running', { started_at: new Date().toISOString(), c_total: 2 });
    const after = { list: await list(), total: (await counts()).total };

    // Assess
    expect(during).toEqual({ list: { data: [], next_cursor: null }, total: 0 });
    expect(after.total).toBe(2);
    expect(after.list.data.map((r: any) => r.contact_id).sort()).toEqual([...contacts].sort());
  });
});

describe('a cancelled broadcast', () => {
  it('records, and so sends, none of its messages once the cancel has answered, however late they were launched; another broadcast still sends', async () => {
    // Prepare: two broadcasts of one business, one of them cancelled; the worker's send port called for each
    const t = await newTenant(['messages:write', 'messages:read']);
    const { sendTemplate, BroadcastStopped } = await import('#shared/broadcasts/sender.ts');
    const create = async (name: string) => (await invoke('POST /broadcasts/v1', { apiKey: t.apiKey, body: { name, ...template, contact_ids: [randomUUID()], send_at: inAnHour() } })).body.data;
    const [stopped, open] = [await create('Stopped'), await create('Open')];
    expect((await invoke('POST /broadcasts/v1/{id}/cancel', { apiKey: t.apiKey, params: { id: stopped.id } })).status).toBe(200);
    const to = `+5215${String(Math.floor(Math.random() * 1e9)).padStart(9, '0')}`;
    const request = { to, type: 'template', templateName: 'hello_world', language: 'en_US' };
    const sentTo = () => upstream.state.sent.filter((m) => m.to === to.slice(1)).length;

    // Act
    const late = await sendTemplate(t.businessId, stopped.id, { contact_id: randomUUID(), phone_number: to }, request).then(() => 'sent', (err) => err);
    const sentAfterLate = sentTo();
    const other = await sendTemplate(t.businessId, open.id, { contact_id: randomUUID(), phone_number: to }, request);

    // Assess
    expect(late).toBeInstanceOf(BroadcastStopped);
    expect(sentAfterLate).toBe(0);
    expect(other.wamid).toMatch(/^wamid\./);
    expect(sentTo()).toBe(1);
  });
});
