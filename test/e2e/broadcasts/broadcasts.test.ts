/**
 * Broadcasts through the local stack over HTTP: a segment broadcast personalised from contact fields, a
 * scheduled one, a cancel mid-way, a worker that dies mid-send, the pacing limit, and the events.
 *
 * The pace is set low (LIMIT_MESSAGES_PER_MINUTE 600 → broadcasts at 540/min, about 8.7 a second) so that
 * a few dozen recipients take a few seconds and the pacing can be seen.
 */
import { jest } from '@jest/globals';
import { startTestStack, type LocalStack } from '../../support/stack.ts';
import { waitFor as waitForValue } from '../../support/wait.ts';
import { callWith, startReceiver } from '../../support/http.ts';
import { freePort } from '#infra/local/free-port.ts';
import { overrideEnv } from '../../support/env.ts';

const ENV = {
  LIMIT_MESSAGES_PER_MINUTE: '600',
  // The tests poll; the per-key request limit is not what they are about.
  LIMIT_REQUESTS_PER_MINUTE: '100000',
  LIMIT_BULK_PER_MINUTE: '1000',
  // Short, so that the crash test's abandoned claim is taken over quickly.
  BROADCAST_LEASE_MS: '4000',
  BROADCAST_LOOP_MS: '3000',
};
const restoreEnv = overrideEnv(ENV, ['UPSTREAM_BASE_URL']);

// Generous: the timings below hold on a quiet machine, the time-outs leave room for a loaded one.
jest.setTimeout(120_000);

let stack: LocalStack;
let key: string;
let businessId: string;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let receiverUrl: string;
const received: { event: string; data: any }[] = [];

beforeAll(async () => {
  // The service modules read UPSTREAM_BASE_URL once, possibly before the stack knows the sandbox's port: fix the port first.
  const sandboxPort = await freePort();
  process.env.UPSTREAM_BASE_URL = `http://127.0.0.1:${sandboxPort}`;
  stack = await startTestStack({ sandboxPort, demo: true, queueRetryDelayMs: 200 });
  key = stack.demo!.apiKey;
  businessId = stack.demo!.businessId;
  receiver = await startReceiver({ events: received });
  receiverUrl = receiver.url;
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  await receiver?.stop();
  restoreEnv();
});

const api = (method: string, path: string, body?: unknown, apiKey = key) => callWith(stack.url, apiKey)(method, path, body);

let phoneSeq = Math.floor(Math.random() * 1e5);
const phone = () => `+52166${String(Date.now() % 1e4).padStart(4, '0')}${String(++phoneSeq).padStart(5, '0')}`;

async function otherTenant(): Promise<{ businessId: string; apiKey: string }> {
  const { newTenant } = await import('../../support/api.ts');
  return newTenant(undefined, 'Other business');
}

/** Seeds contacts (see seed.ts) and answers their ids. */
async function createContacts(list: Record<string, unknown>[], bid = businessId): Promise<string[]> {
  const { contact, seedContacts } = await import('./seed.ts');
  const seeded = await seedContacts(bid, list.map((fields) => contact(fields)));
  return seeded.map((c) => c.id);
}

async function staticSegment(contactIds: string[]): Promise<string> {
  const seg = await api('POST', '/segments', { name: `Audience ${phoneSeq}`, type: 'static' });
  expect(seg.status).toBe(201);
  const add = await api('POST', `/segments/${seg.body.data.id}/members`, { action: 'add', contactIds });
  expect(add.status).toBe(200);
  return seg.body.data.id;
}

/** Broadcasts pace their sends: their work may take most of a minute. */
const waitFor = <T>(what: string, read: () => Promise<T | undefined | false>) => waitForValue(what, read, 60_000, 100);

const broadcastIn = (id: string, statuses: string[], apiKey = key) =>
  waitFor(`broadcast ${statuses.join('/')}`, async () => {
    const res = await api('GET', `/broadcasts/v1/${id}`, undefined, apiKey);
    return statuses.includes(res.body.data.status) && res.body.data;
  });

async function allRecipients(id: string, status?: string, apiKey = key) {
  const out: any[] = [];
  let cursor: string | null = null;
  do {
    const q = new URLSearchParams({ limit: '7', ...(cursor ? { cursor } : {}), ...(status ? { status } : {}) });
    const res = await api('GET', `/broadcasts/v1/${id}/recipients?${q}`, undefined, apiKey);
    expect(res.status).toBe(200);
    out.push(...res.body.data);
    cursor = res.body.next_cursor;
  } while (cursor);
  return out;
}

const sandboxSent = async (to: string): Promise<any[]> => (await (await fetch(`${stack.sandboxUrl}/__sandbox/sent?${new URLSearchParams({ to })}`)).json()) as any[];
const sentList = (x: any): any[] => (Array.isArray(x) ? x : x.sent ?? x.messages ?? x.payloads ?? []);

describe('broadcasts through the local stack', () => {
  it('sends a template to a segment with parameters from contact fields, skips deleted and opted-out contacts, and emits its events', async () => {
    // Prepare
    const hook = await api('POST', '/user-webhooks', { name: 'broadcast events', url: receiverUrl, events: ['broadcast.sent', 'broadcast.completed', 'broadcast.failed', 'message.delivered', 'message.read'] });
    expect(hook.status).toBe(201);
    const people: { phone_number: string; name: string; custom_fields: Record<string, string> }[] = [
      { phone_number: phone(), name: 'Ana López', custom_fields: { city: 'Monterrey' } },
      { phone_number: phone(), name: 'Bruno', custom_fields: { city: 'Puebla' } },
      { phone_number: phone(), name: 'Carla', custom_fields: {} },
      { phone_number: phone(), name: 'Dora', custom_fields: { city: 'León' } },
      { phone_number: phone(), name: 'Eli', custom_fields: { city: 'Tijuana' } },
    ];
    const ids = await createContacts(people);
    const segmentId = await staticSegment(ids);
    // After joining the segment, one contact opts out and one is deleted.
    const { contact, seedContacts } = await import('./seed.ts');
    await seedContacts(businessId, [
      contact({ ...people[3], id: ids[3], opted_out: true }),
      contact({ ...people[4], id: ids[4], deleted_at: new Date().toISOString() }),
    ]);

    // Act
    const created = await api('POST', '/broadcasts/v1', {
      name: 'Order update',
      templateName: 'order_update',
      template_parameters: ['{{contact.first_name}}', '{{custom_fields.city|tu ciudad}}'],
      segment_id: segmentId,
    });

    // Assess
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ id: expect.any(String), name: 'Order update', status: 'running', audience: { type: 'segment', segment_id: segmentId } });
    const done = await broadcastIn(created.body.data.id, ['completed']);
    expect(done.counts).toMatchObject({ total: 5, sent: 3, failed: 0, skipped: 2, cancelled: 0, pending: 0 });

    const recipients = await allRecipients(done.id);
    const byContact = new Map(recipients.map((r) => [r.contact_id, r]));
    expect(byContact.get(ids[0])).toMatchObject({ status: 'sent', phone_number: people[0].phone_number, message_id: expect.any(String), wamid: expect.any(String) });
    expect(byContact.get(ids[3])).toMatchObject({ status: 'skipped', reason: 'opted_out', message_id: null });
    expect(byContact.get(ids[4])).toMatchObject({ status: 'skipped', reason: 'deleted' });
    expect((await allRecipients(done.id, 'skipped')).map((r) => r.contact_id).sort()).toEqual([ids[3], ids[4]].sort());

    const ana = sentList(await sandboxSent(people[0].phone_number));
    expect(ana).toHaveLength(1);
    expect(JSON.stringify(ana[0])).toContain('"Ana"');
    expect(JSON.stringify(ana[0])).toContain('Monterrey');
    const carla = sentList(await sandboxSent(people[2].phone_number));
    expect(JSON.stringify(carla[0])).toContain('tu ciudad');
    expect(sentList(await sandboxSent(people[3].phone_number))).toHaveLength(0);

    const events = await waitFor('broadcast events', async () => {
      const mine = received.filter((e) => e.data?.broadcast_id === done.id);
      return mine.some((e) => e.event === 'broadcast.completed') && mine;
    });
    expect(events.find((e) => e.event === 'broadcast.sent')?.data).toMatchObject({ broadcast_id: done.id, recipients: 5, skipped: 2 });
    expect(events.find((e) => e.event === 'broadcast.completed')?.data.counts).toMatchObject({ total: 5, sent: 3, skipped: 2, pending: 0 });

    const usage = await api('GET', `/segments/${segmentId}/usage`);
    expect(JSON.stringify(usage.body)).toContain(done.id);

    // Status webhooks from the upstream move the broadcast's counts (through the messaging status path).
    const anaWamid = byContact.get(ids[0]).wamid;
    const bruno = byContact.get(ids[1]);
    const status = (wamid: string, value: string) =>
      fetch(`${stack.sandboxUrl}/__sandbox/status`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ wamid, status: value }) });
    await status(anaWamid, 'delivered');
    await status(anaWamid, 'read');
    await status(bruno.wamid, 'delivered');
    const counted = await waitFor('delivered and read counts', async () => {
      const res = await api('GET', `/broadcasts/v1/${done.id}`);
      return res.body.data.counts.read === 1 && res.body.data.counts.delivered >= 2 && res.body.data;
    });
    expect(counted.counts).toMatchObject({ sent: 3, read: 1 });
    // Every event of a broadcast's message names the broadcast, not only message.sent.
    const statusEvents = await waitFor('status events naming the broadcast', async () => {
      const mine = received.filter((e) => e.data?.broadcast_id === done.id && (e.event === 'message.delivered' || e.event === 'message.read'));
      return mine.length >= 3 && mine;
    });
    expect(statusEvents.map((e) => `${e.event} ${e.data.message_id}`).sort()).toEqual([
      `message.delivered ${byContact.get(ids[0]).message_id}`, `message.delivered ${bruno.message_id}`, `message.read ${byContact.get(ids[0]).message_id}`,
    ].sort());
  });

  it('does not send to a contact deleted or opted out after the start, and sends to the number a contact changed to', async () => {
    // Prepare: 40 recipients at about 9 a second; the last three change once the audience is frozen
    const people = Array.from({ length: 40 }, (_, i) => ({ phone_number: phone(), name: `Mid ${i}` }));
    const ids = await createContacts(people);
    const created = await api('POST', '/broadcasts/v1', { name: 'Mid-run changes', templateName: 'order_update', template_parameters: ['{{contact.name}}', 'M-1'], contact_ids: ids });
    expect(created.status).toBe(201);
    const id = created.body.data.id;
    await waitFor('started', async () => (await api('GET', `/broadcasts/v1/${id}`)).body.data.started_at);
    const newNumber = phone();
    // One the upstream refuses (the sandbox's 131026 ending): the recipient fails, showing the number it was sent to.
    const blockedNumber = `+52166${String(++phoneSeq % 1e4).padStart(4, '0')}131026`;

    // Act
    const changes = await Promise.all([
      api('DELETE', `/contacts/v1/${ids[39]}`),
      api('PATCH', `/contacts/v1/${ids[38]}`, { opted_out: true }),
      api('PATCH', `/contacts/v1/${ids[37]}`, { phone_number: newNumber }),
      api('PATCH', `/contacts/v1/${ids[36]}`, { phone_number: blockedNumber }),
    ]);

    // Assess
    expect(changes.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    const done = await broadcastIn(id, ['completed']);
    expect(done.counts).toMatchObject({ total: 40, sent: 37, skipped: 2, failed: 1, pending: 0 });
    const recipients = await allRecipients(id);
    expect(recipients.find((r) => r.contact_id === ids[39])).toMatchObject({ status: 'skipped', reason: 'deleted' });
    expect(recipients.find((r) => r.contact_id === ids[38])).toMatchObject({ status: 'skipped', reason: 'opted_out' });
    expect(recipients.find((r) => r.contact_id === ids[37])).toMatchObject({ status: 'sent', phone_number: newNumber });
    expect(recipients.find((r) => r.contact_id === ids[36])).toMatchObject({ status: 'failed', phone_number: blockedNumber, error: { code: '131026' } });
    expect(sentList(await sandboxSent(people[39].phone_number))).toHaveLength(0);
    expect(sentList(await sandboxSent(people[38].phone_number))).toHaveLength(0);
    expect(sentList(await sandboxSent(people[37].phone_number))).toHaveLength(0);
    expect(sentList(await sandboxSent(newNumber))).toHaveLength(1);
    // The deleted contact's number did not come back as a new contact.
    const search = await api('GET', `/contacts/v1?search=${encodeURIComponent(people[39].phone_number.slice(1))}`);
    expect(search.body.contacts).toEqual([]);
  });

  it('evaluates a dynamic segment once, when the broadcast starts', async () => {
    // Prepare
    const tag = `vip${phoneSeq}`;
    const people = [
      { phone_number: phone(), name: 'Hugo', tags: [tag] },
      { phone_number: phone(), name: 'Iris', tags: [tag] },
      { phone_number: phone(), name: 'Juan', tags: ['other'] },
    ];
    const ids = await createContacts(people);
    const seg = await api('POST', '/segments', { name: `Dynamic ${tag}`, type: 'dynamic', rules: { version: 3, filters: { tags: { any: [tag] } } } });
    expect(seg.status).toBe(201);

    // Act
    const created = await api('POST', '/broadcasts/v1', { name: 'VIP', templateName: 'order_update', template_parameters: ['{{contact.name}}', 'A-1'], audience: { segment_id: seg.body.data.id } });

    // Assess
    expect(created.status).toBe(201);
    expect(created.body.data.audience).toEqual({ type: 'segment', segment_id: seg.body.data.id, segment_type: 'dynamic' });
    const done = await broadcastIn(created.body.data.id, ['completed']);
    expect(done.counts).toMatchObject({ total: 2, sent: 2 });
    expect((await allRecipients(done.id)).map((r) => r.contact_id).sort()).toEqual([ids[0], ids[1]].sort());
    expect(sentList(await sandboxSent(people[2].phone_number))).toHaveLength(0);
  });

  it('moves a recipient whose failed message is retried back to sent, with its counts', async () => {
    // Prepare: two recipients, and a failed status for one of them after the broadcast sent both
    const people = [{ phone_number: phone(), name: 'Luz' }, { phone_number: phone(), name: 'Mar' }];
    const ids = await createContacts(people);
    const created = await api('POST', '/broadcasts/v1', { name: 'Retry', templateName: 'order_update', template_parameters: ['{{contact.name}}', 'R-1'], contact_ids: ids });
    await broadcastIn(created.body.data.id, ['completed']);
    const [failing] = await allRecipients(created.body.data.id);
    await fetch(`${stack.sandboxUrl}/__sandbox/status`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ wamid: failing.wamid, status: 'failed', code: 131026 }) });
    await stack.queues.idle();
    const before = (await api('GET', `/broadcasts/v1/${created.body.data.id}`)).body.data.counts;

    // Act
    const retry = await api('POST', `/messages/v1/${failing.message_id}/retry`);

    // Assess: the recipient is sent again, with the retry's wamid, and the counts say so
    expect(before).toMatchObject({ sent: 1, failed: 1 });
    expect(retry.status).toBe(200);
    const after = (await api('GET', `/broadcasts/v1/${created.body.data.id}`)).body.data.counts;
    expect(after).toMatchObject({ total: 2, sent: 2, failed: 0 });
    const recipient = (await allRecipients(created.body.data.id)).find((r) => r.contact_id === failing.contact_id);
    expect(recipient).toMatchObject({ status: 'sent', wamid: retry.body.data.messageId });
    expect(recipient.error ?? null).toBeNull();
  });

  it('goes on once the upstream stops throttling a send through all its attempts: its recipient is sent the same message, once', async () => {
    // Prepare: the first send's three upstream attempts throttled
    const person = { phone_number: phone(), name: 'Paz' };
    const [id] = await createContacts([person]);
    const fault = await fetch(`${stack.sandboxUrl}/__sandbox/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'throttle', count: 3, target: 'messages' }) });
    expect(fault.ok).toBe(true);

    // Act
    const created = await api('POST', '/broadcasts/v1', { name: 'Throttled', templateName: 'order_update', template_parameters: ['{{contact.name}}', 'T-1'], contact_ids: [id] });

    // Assess
    const done = await broadcastIn(created.body.data.id, ['completed', 'failed']);
    expect(done).toMatchObject({ status: 'completed', counts: { total: 1, sent: 1, failed: 0, pending: 0 } });
    const [recipient] = await allRecipients(done.id);
    expect(recipient).toMatchObject({ status: 'sent', error: null });
    expect(sentList(await sandboxSent(person.phone_number))).toHaveLength(1);
    const message = (await api('GET', `/messages/v1/${recipient.message_id}`)).body.message;
    expect(message).toMatchObject({ id: recipient.message_id, status: 'sent', wamid: recipient.wamid, retriedAt: expect.any(String) });
    const listed = (await api('GET', `/conversations/v1/${message.conversationId}/messages`)).body.messages as any[];
    expect(listed.filter((m) => m.direction === 'outbound').map((m) => m.id)).toEqual([recipient.message_id]);
  });

  it("retries a throttled recipient's message only while its broadcast is not cancelled", async () => {
    // Prepare: a message the upstream's throttling failed, and two broadcasts, one cancelled (its stop marker)
    const { retryTemplate, BroadcastStopped } = await import('#shared/broadcasts/sender.ts');
    const { db, table } = await import('#shared/store/client.ts');
    const { PutCommand } = await import('@aws-sdk/lib-dynamodb');
    const { keys } = await import('#shared/store/keys.ts');
    const to = phone();
    await fetch(`${stack.sandboxUrl}/__sandbox/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'throttle', count: 3, target: 'messages' }) });
    const failed = await api('POST', '/messages/v1', { to, type: 'template', template: { name: 'hello_world', language: { code: 'en_US' } } });
    expect(failed.status).toBe(429);
    const [cancelled, running] = [crypto.randomUUID(), crypto.randomUUID()];
    await db.send(new PutCommand({ TableName: table(), Item: { ...keys.broadcastStop(businessId, cancelled), type: 'broadcastStop' } }));

    // Act
    const refused = await retryTemplate(businessId, cancelled, failed.body.data.id).catch((err: unknown) => err);
    const stillFailed = (await api('GET', `/messages/v1/${failed.body.data.id}`)).body.message;
    const sent = await retryTemplate(businessId, running, failed.body.data.id);

    // Assess
    expect(refused).toBeInstanceOf(BroadcastStopped);
    expect(stillFailed.status).toBe('failed');
    expect(sent.messageId).toBe(failed.body.data.id);
    expect(sentList(await sandboxSent(to))).toHaveLength(1);
  });

  it("fails only the recipients whose number the upstream refuses (the sandbox's 131026 and 131042), and sends to the rest", async () => {
    // Prepare
    const numbered = (code: string) => `+52166${String(++phoneSeq % 1e4).padStart(4, '0')}${code}`;
    const people = [numbered('131042'), phone(), numbered('131026'), phone()].map((phone_number, i) => ({ phone_number, name: `N${i}` }));
    const ids = await createContacts(people);

    // Act
    const created = await api('POST', '/broadcasts/v1', { name: 'Refused numbers', templateName: 'order_update', template_parameters: ['{{contact.name}}', 'N-1'], contact_ids: ids });

    // Assess
    const done = await broadcastIn(created.body.data.id, ['completed', 'failed']);
    expect(done).toMatchObject({ status: 'completed', error: null, counts: { total: 4, sent: 2, failed: 2 } });
    const recipients = await allRecipients(done.id);
    expect(recipients.find((r) => r.contact_id === ids[0])).toMatchObject({ status: 'failed', error: { code: '131042' } });
    expect(recipients.find((r) => r.contact_id === ids[2])).toMatchObject({ status: 'failed', error: { code: '131026' } });
  });

  it('fails with broadcast.failed when the upstream rejects the template, and sends no more', async () => {
    // Prepare: more recipients than one second's sends, so that the failure leaves some to mark cancelled
    const people = Array.from({ length: 30 }, (_, i) => ({ phone_number: phone(), name: `T${i}` }));
    const ids = await createContacts(people);

    // Act
    const created = await api('POST', '/broadcasts/v1', { name: 'Unknown template', templateName: 'no_such_template', contact_ids: ids });

    // Assess
    expect(created.status).toBe(201);
    const failed = await broadcastIn(created.body.data.id, ['failed']);
    expect(failed.error).toMatchObject({ code: '132000' });
    await waitFor('sweep', async () => (await api('GET', `/broadcasts/v1/${failed.id}`)).body.data.counts.pending === 0);
    const final = (await api('GET', `/broadcasts/v1/${failed.id}`)).body.data;
    expect(final.counts.failed).toBeGreaterThanOrEqual(1);
    expect(final.counts.failed + final.counts.cancelled).toBe(30);
    expect(final.counts.cancelled).toBeGreaterThan(0);
    const event = await waitFor('broadcast.failed', async () => received.find((e) => e.event === 'broadcast.failed' && e.data?.broadcast_id === failed.id));
    // The end event's counts are the broadcast's final ones: what went out before the failure and what it left out.
    expect(event.data).toMatchObject({ status: 'failed', error: { code: '132000' }, counts: final.counts });
    expect(received.filter((e) => e.event === 'broadcast.failed' && e.data?.broadcast_id === failed.id)).toHaveLength(1);
  });

  it('starts a scheduled broadcast at send_at, not before, through an EventBridge schedule', async () => {
    // Prepare
    const people = [{ phone_number: phone(), name: 'Fer' }, { phone_number: phone(), name: 'Gil' }];
    const ids = await createContacts(people);
    const sendAt = new Date(Date.now() + 2500).toISOString();

    // Act
    const created = await api('POST', '/broadcasts/v1', { name: 'Later', templateName: 'hello_world', language: 'en_US', contact_ids: ids, send_at: sendAt });

    // Assess
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ status: 'scheduled', send_at: sendAt, started_at: null });
    // The start is a one-time schedule the Scheduler stand-in received through @aws-sdk/client-scheduler; it sends
    // the start message to the broadcasts queue when due and is then deleted (ActionAfterCompletion DELETE).
    const schedule = () => stack.queues.services.scheduler.list().find((s) => s.name === `broadcast-${created.body.data.id}`);
    expect(schedule()).toMatchObject({ expression: `at(${new Date(Math.ceil(Date.parse(sendAt) / 1000) * 1000).toISOString().slice(0, 19)})` });
    const before = (await api('GET', `/broadcasts/v1/${created.body.data.id}`)).body.data;
    if (Date.now() < Date.parse(sendAt) - 200) expect(before.status).toBe('scheduled');
    const done = await broadcastIn(created.body.data.id, ['completed']);
    expect(schedule()).toBeUndefined();
    expect(stack.queues.services.scheduler.failures).toEqual([]);
    expect(Date.parse(done.started_at)).toBeGreaterThanOrEqual(Date.parse(sendAt));
    expect(done.counts).toMatchObject({ total: 2, sent: 2 });
    for (const r of await allRecipients(done.id)) expect(Date.parse(r.sent_at)).toBeGreaterThanOrEqual(Date.parse(sendAt));
    const list = await api('GET', '/broadcasts/v1?status=completed');
    expect(list.body.data.map((b: any) => b.id)).toContain(done.id);
  });

  it('cancels a running broadcast: what has not gone out is cancelled and never sent, and its end event has the final counts', async () => {
    // Prepare
    const hook = await api('POST', '/user-webhooks', { name: 'cancel end', url: receiverUrl, events: ['broadcast.completed'] });
    expect(hook.status).toBe(201);
    const people = Array.from({ length: 40 }, (_, i) => ({ phone_number: phone(), name: `P${i}` }));
    const ids = await createContacts(people);
    const created = await api('POST', '/broadcasts/v1', { name: 'Stop me', templateName: 'hello_world', language: 'en_US', contact_ids: ids });
    const id = created.body.data.id;
    await waitFor('first sends', async () => (await api('GET', `/broadcasts/v1/${id}`)).body.data.counts.sent >= 1);

    // Act
    const cancelled = await api('POST', `/broadcasts/v1/${id}/cancel`);

    // Assess
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.data.status).toBe('cancelled');
    const final = await waitFor('sweep', async () => {
      const b = (await api('GET', `/broadcasts/v1/${id}`)).body.data;
      return b.counts.pending === 0 && b;
    });
    expect(final.status).toBe('cancelled');
    expect(final.counts.sent).toBeLessThan(40);
    expect(final.counts.cancelled).toBeGreaterThan(0);
    const recipients = await allRecipients(id);
    expect(recipients.filter((r) => r.status === 'failed')).toEqual([]);
    expect(final.counts.sent + final.counts.cancelled).toBe(40);
    for (const r of recipients) {
      const got = sentList(await sandboxSent(r.phone_number));
      expect([r.status, got.length]).toEqual(r.status === 'cancelled' ? ['cancelled', 0] : ['sent', 1]);
    }
    expect((await api('POST', `/broadcasts/v1/${id}/cancel`)).body).toMatchObject({ error: 'invalid_state' });
    // The end event waits for the run to stop: its counts are the broadcast's last ones, not the cancel's first look.
    const ends = await waitFor('end event', async () => {
      const mine = received.filter((e) => e.event === 'broadcast.completed' && e.data?.broadcast_id === id);
      return mine.length > 0 && mine;
    });
    const { pending: _pending, ...finalCounts } = (await api('GET', `/broadcasts/v1/${id}`)).body.data.counts;
    for (const e of ends) expect(e.data).toMatchObject({ status: 'cancelled', cancelled_at: final.cancelled_at, counts: finalCounts });
    await api('DELETE', `/user-webhooks/${hook.body.data.id}`);
  });

  it('cancelled while its audience is being frozen, ends with no recipients: its counts stay those of its end event', async () => {
    // Prepare: an audience large enough that freezing it takes a while
    const hook = await api('POST', '/user-webhooks', { name: 'freeze cancel', url: receiverUrl, events: ['broadcast.completed'] });
    const ids = await createContacts(Array.from({ length: 2000 }, (_, i) => ({ phone_number: phone(), name: `F${i}` })));
    const { db, table } = await import('#shared/store/client.ts');
    const { GetCommand } = await import('@aws-sdk/lib-dynamodb');
    const { keys } = await import('#shared/store/keys.ts');
    const created = await api('POST', '/broadcasts/v1', { name: 'Frozen cancel', templateName: 'hello_world', language: 'en_US', contact_ids: ids });
    const id = created.body.data.id;
    await waitForValue('the start step freezing the audience', async () =>
      (await db.send(new GetCommand({ TableName: table(), Key: keys.broadcast(businessId, id), ConsistentRead: true }))).Item?.freeze_token !== undefined, 30_000, 5);

    // Act
    const cancelled = await api('POST', `/broadcasts/v1/${id}/cancel`);

    // Assess: after the start step is done, the broadcast still shows what its end event said
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.data).toMatchObject({ status: 'cancelled', started_at: null, counts: { total: 0, cancelled: 0 } });
    const ends = await waitFor('end event', async () => {
      const mine = received.filter((e) => e.event === 'broadcast.completed' && e.data?.broadcast_id === id);
      return mine.length > 0 && mine;
    });
    // The start step (and any run it queued) done: every queue idle.
    await stack.queues.idle(60_000);
    const after = (await api('GET', `/broadcasts/v1/${id}`)).body.data;
    // One end event (each subscription of this file to it gets its copy).
    expect(new Set(ends.map((e) => JSON.stringify(e.data))).size).toBe(1);
    expect(ends[0].data.counts).toEqual(after.counts);
    expect(after.counts).toMatchObject({ total: 0, pending: 0, cancelled: 0, sent: 0 });
    expect(await allRecipients(id)).toEqual([]);
    await api('DELETE', `/user-webhooks/${hook.body.data.id}`);
  });

  it('survives a worker dying between sending and recording, without sending anyone twice', async () => {
    // Prepare
    const { faults, SimulatedCrash } = await import('#shared/broadcasts/pipeline.ts');
    const people = Array.from({ length: 12 }, (_, i) => ({ phone_number: phone(), name: `Q${i}` }));
    const ids = await createContacts(people);
    let crashes = 0;
    faults.afterSend = (r) => {
      if (r.contact_id === ids[4] && crashes === 0) {
        crashes++;
        throw new SimulatedCrash('worker died');
      }
    };

    // Act
    const created = await api('POST', '/broadcasts/v1', { name: 'Crash', templateName: 'hello_world', language: 'en_US', contact_ids: ids });
    const done = await broadcastIn(created.body.data.id, ['completed']);
    faults.afterSend = undefined;

    // Assess
    expect(crashes).toBe(1);
    expect(done.counts).toMatchObject({ total: 12, sent: 12, failed: 0 });
    for (const p of people) expect(sentList(await sandboxSent(p.phone_number!))).toHaveLength(1);
    const crashed = (await allRecipients(done.id)).find((r) => r.contact_id === ids[4]);
    expect(crashed).toMatchObject({ status: 'sent', message_id: expect.any(String) });
  });

  it('keeps its counts exact when several runs of one broadcast work at once, round after round', async () => {
    // Prepare: duplicate run messages are allowed (a retried start, a redelivered message); three run chains per
    // broadcast, three broadcasts at a time, four rounds. A run that settled a recipient and flushed its count after
    // another run had completed the broadcast used to count that recipient twice (total 5, sent 4, skipped 2).
    const { enqueueRun } = await import('#shared/broadcasts/messages.ts');
    const tenant = await otherTenant();
    const { contact, seedContacts } = await import('./seed.ts');
    const oneBroadcast = async (round: number, n: number) => {
      const people = Array.from({ length: 6 }, (_, i) => contact({ phone_number: phone(), name: `C${round}.${n}.${i}` }));
      await seedContacts(tenant.businessId, people);
      await seedContacts(tenant.businessId, [{ ...people[4], opted_out: true }, { ...people[5], deleted_at: new Date().toISOString() }]);
      const created = await api('POST', '/broadcasts/v1', { name: `Race ${round}.${n}`, templateName: 'hello_world', language: 'en_US', contact_ids: people.map((p) => p.id) }, tenant.apiKey);
      expect(created.status).toBe(201);
      await Promise.all([enqueueRun(tenant.businessId, created.body.data.id), enqueueRun(tenant.businessId, created.body.data.id)]);
      const done = await waitFor('completed', async () => {
        const res = await api('GET', `/broadcasts/v1/${created.body.data.id}`, undefined, tenant.apiKey);
        return res.body.data.status === 'completed' && res.body.data;
      });
      // Late flushes land within a second of the completion: look again after that.
      await new Promise((r) => setTimeout(r, 1500));
      const after = (await api('GET', `/broadcasts/v1/${done.id}`, undefined, tenant.apiKey)).body.data;
      const copies = await Promise.all(people.map(async (p) => sentList(await sandboxSent(p.phone_number!)).length));
      const recipients = (await api('GET', `/broadcasts/v1/${done.id}/recipients?limit=100`, undefined, tenant.apiKey)).body.data as { status: string }[];
      const byStatus = Object.fromEntries(['sent', 'failed', 'skipped', 'cancelled'].map((s) => [s, recipients.filter((r) => r.status === s).length]));
      return { counts: after.counts, copies, byStatus };
    };

    // Act
    const results = [];
    for (let round = 0; round < 4; round++) results.push(...await Promise.all([0, 1, 2].map((n) => oneBroadcast(round, n))));

    // Assess
    // On a loaded machine a send can outlast the lease and another run then records it `failed` (outcome_unknown)
    // rather than send it again: sent and failed may split the four, but the counts must be the recipients' own.
    for (const { counts, copies, byStatus } of results) {
      expect(counts).toMatchObject({ total: 6, skipped: 2, cancelled: 0, pending: 0, sent: byStatus.sent, failed: byStatus.failed });
      expect(counts.sent + counts.failed + counts.skipped + counts.cancelled).toBe(counts.total);
      expect(copies.slice(0, 4).every((n) => n <= 1)).toBe(true);
      expect(copies.slice(4)).toEqual([0, 0]);
      expect(copies.filter((n) => n === 1).length).toBeGreaterThanOrEqual(counts.sent);
    }
  }, 240_000);

  it('paces sends within the budget it shares with ordinary sends', async () => {
    // Prepare: ordinary sends have used all but 5 of this minute's broadcast room (stay inside one minute).
    const { consumeOrdinarySend } = await import('#shared/broadcasts/budget.ts');
    const { broadcastSettings } = await import('#shared/broadcasts/settings.ts');
    if (Date.now() % 60_000 > 52_000) await new Promise((r) => setTimeout(r, 60_000 - (Date.now() % 60_000) + 100));
    const tenant = await otherTenant();
    const { db, table } = await import('#shared/store/client.ts');
    const { PutCommand } = await import('@aws-sdk/lib-dynamodb');
    const { keys } = await import('#shared/store/keys.ts');
    const minute = Math.floor(Date.now() / 60_000) * 60;
    await db.send(new PutCommand({ TableName: table(), Item: { ...keys.messageBudget(tenant.businessId, `M${minute}`), count: broadcastSettings.pacePerMinute - 6 } }));
    expect(await consumeOrdinarySend(tenant.businessId)).toBe(true);
    const people = Array.from({ length: 20 }, (_, i) => ({ phone_number: phone(), name: `R${i}` }));
    const ids = await createContacts(people, tenant.businessId);

    // Act
    const created = await api('POST', '/broadcasts/v1', { name: 'Paced', templateName: 'hello_world', language: 'en_US', contact_ids: ids }, tenant.apiKey);
    await waitFor('five sends', async () => (await api('GET', `/broadcasts/v1/${created.body.data.id}`, undefined, tenant.apiKey)).body.data.counts.sent >= 5);
    await new Promise((r) => setTimeout(r, 2000));

    // Assess: five went out this minute, the rest wait for the next one.
    const b = (await api('GET', `/broadcasts/v1/${created.body.data.id}`, undefined, tenant.apiKey)).body.data;
    expect(b.status).toBe('running');
    expect(b.counts.sent).toBe(5);
    expect(await consumeOrdinarySend(tenant.businessId)).toBe(true);
    await api('POST', `/broadcasts/v1/${b.id}/cancel`, undefined, tenant.apiKey);
  });

  it('never sends faster than its pace', async () => {
    // Prepare: a business of its own, so that its per-second budget counters hold this broadcast alone.
    const tenant = await otherTenant();
    const people = Array.from({ length: 30 }, (_, i) => ({ phone_number: phone(), name: `S${i}` }));
    const ids = await createContacts(people, tenant.businessId);
    const firstSecond = Math.floor(Date.now() / 1000);
    const created = await api('POST', '/broadcasts/v1', { name: 'Timing', templateName: 'hello_world', language: 'en_US', contact_ids: ids }, tenant.apiKey);
    const { broadcastSettings } = await import('#shared/broadcasts/settings.ts');
    const { secondShare } = await import('#shared/broadcasts/budget.ts');

    // Act
    const done = await broadcastIn(created.body.data.id, ['completed'], tenant.apiKey);
    const lastSecond = Math.floor(Date.now() / 1000);

    // Assess: each second reserved at most its share of the pace (the budget's own counters, which no send's
    // duration moves), 30 in all, so spread over at least as many seconds as the shares need.
    expect((await allRecipients(created.body.data.id, 'failed', tenant.apiKey)).map((r) => r.error)).toEqual([]);
    expect(done.counts.sent).toBe(30);
    const { db, table } = await import('#shared/store/client.ts');
    const { GetCommand } = await import('@aws-sdk/lib-dynamodb');
    const { keys } = await import('#shared/store/keys.ts');
    const reserved: { second: number; count: number; share: number }[] = [];
    for (let second = firstSecond; second <= lastSecond; second++) {
      const item = (await db.send(new GetCommand({ TableName: table(), Key: keys.messageBudget(tenant.businessId, `S${second}`) }))).Item;
      if (item?.count) reserved.push({ second, count: item.count, share: secondShare(broadcastSettings.pacePerMinute, second) });
    }
    expect(reserved.filter((r) => r.count > r.share)).toEqual([]);
    expect(reserved.reduce((sum, r) => sum + r.count, 0)).toBe(30);
    const largestShare = Math.ceil(broadcastSettings.pacePerMinute / 62);
    expect(reserved.length).toBeGreaterThanOrEqual(Math.ceil(30 / largestShare));
    // What the recipients saw: no calendar second holds more than two seconds' shares (a send finishes within
    // a second of its reservation).
    const times = (await allRecipients(created.body.data.id, undefined, tenant.apiKey)).map((r) => Date.parse(r.sent_at));
    const perCalendarSecond = new Map<number, number>();
    for (const t of times) perCalendarSecond.set(Math.floor(t / 1000), (perCalendarSecond.get(Math.floor(t / 1000)) ?? 0) + 1);
    expect(Math.max(...perCalendarSecond.values())).toBeLessThanOrEqual(2 * largestShare);
  });

  describe('a recipient the upstream keeps throttling (the sandbox reset ends it)', () => {
    const sandbox = (path: string, body: unknown = {}) =>
      fetch(`${stack.sandboxUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    afterEach(async () => {
      await sandbox('/__sandbox/reset');
    });

    /** A one-recipient broadcast whose sends Meta throttles until the sandbox is reset: answers it once its recipient waits with a failed message. */
    async function throttledBroadcast(phoneNumber: string) {
      const [id] = await createContacts([{ phone_number: phoneNumber, name: 'Throttled' }]);
      await sandbox('/__sandbox/faults', { kind: 'throttle', count: 100_000, target: 'messages' });
      const created = await api('POST', '/broadcasts/v1', { name: 'Throttled for good', templateName: 'order_update', template_parameters: ['{{contact.name}}', 'T-2'], contact_ids: [id] });
      const waiting = await waitFor('a throttled try', async () => (await allRecipients(created.body.data.id)).find((r) => r.status === 'pending' && r.message_id));
      return { contactId: id, broadcastId: created.body.data.id as string, messageId: waiting.message_id as string };
    }

    it('follows a throttled message retried by hand: the recipient is sent, once', async () => {
      // Prepare
      const to = phone();
      const { broadcastId, messageId } = await throttledBroadcast(to);
      await sandbox('/__sandbox/reset');

      // Act: the business retries the message (the broadcast's own turn may come first: then it is no longer failed)
      const retry = await api('POST', `/messages/v1/${messageId}/retry`);

      // Assess
      expect([200, 400]).toContain(retry.status);
      const done = await broadcastIn(broadcastId, ['completed']);
      expect(done.counts).toMatchObject({ total: 1, sent: 1, failed: 0 });
      expect((await allRecipients(broadcastId))[0]).toMatchObject({ status: 'sent', message_id: messageId, error: null });
      expect(sentList(await sandboxSent(to))).toHaveLength(1);
    });

    it('sends to the number a contact changed to while its throttled message waited, and shows that number', async () => {
      // Prepare
      const [before, after] = [phone(), phone()];
      const { contactId, broadcastId } = await throttledBroadcast(before);

      // Act
      expect((await api('PATCH', `/contacts/v1/${contactId}`, { phone_number: after })).status).toBe(200);
      await waitFor('a throttled try to the new number', async () => (await allRecipients(broadcastId)).find((r) => r.phone_number === after));
      await sandbox('/__sandbox/reset');

      // Assess
      const done = await broadcastIn(broadcastId, ['completed']);
      expect(done.counts).toMatchObject({ total: 1, sent: 1, failed: 0 });
      expect((await allRecipients(broadcastId))[0]).toMatchObject({ status: 'sent', phone_number: after });
      expect(sentList(await sandboxSent(after))).toHaveLength(1);
      expect(sentList(await sandboxSent(before))).toHaveLength(0);
    });
  });
});
