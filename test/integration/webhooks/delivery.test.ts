import './env.ts';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { invoke, newTenant, type TestTenant } from '../../support/api.ts';
import type { LocalQueues } from '#infra/local/queues.ts';
import { startQueues } from '../../support/queues.ts';
import { inOwnTable, scanTable } from '../../support/table.ts';
import { EVENT_NAMES } from '#shared/events/names.ts';
import { commit, newEvent, outboxPut } from '#shared/events/outbox.ts';
import { db } from '#shared/store/client.ts';
import { outboxItemsOf } from '#shared/webhooks/outbox-store.ts';
import { sweepOutbox } from '#shared/webhooks/sweep.ts';
import { getSubscription, updateSubscription } from '#shared/webhooks/subscription-store.ts';
import { receiverPool, verifyHex, verifyStandard, type Received } from './receiver.ts';

let queues: LocalQueues;
const receivers = receiverPool();

beforeAll(async () => {
  queues = await startQueues({ retryDelayMs: 50, concurrency: 4 });
});
afterAll(async () => {
  await queues.stop();
  await receivers.closeAll();
});

const receiver = receivers.start;

/** A test of the outbox sweep, in a table of its own (see inOwnTable), with its queues drained before the table changes back. */
const sweepTest = (work: () => Promise<void>) => () => inOwnTable(async () => {
  await work();
  await queues.idle();
});

async function subscribe(t: TestTenant, url: string, events: string[] = ['*']) {
  const res = await invoke('POST /user-webhooks', { apiKey: t.apiKey, body: { name: 'test', url, events } });
  expect(res.status).toBe(201);
  return res.body.data as { id: string; secret: string };
}

const deliveries = async (t: TestTenant, id: string) =>
  (await invoke('GET /user-webhooks/{id}/deliveries', { apiKey: t.apiKey, params: { id }, query: { limit: '100' } })).body;

describe('webhook delivery', () => {
  it('delivers every event of the contract, signed with both schemes, to a real receiver', async () => {
    // Prepare
    const t = await newTenant();
    const r = await receiver();
    const s = await subscribe(t, r.url);

    // Act
    for (const name of EVENT_NAMES) await commit([], [newEvent(t.businessId, name, { example: name, text: 'olá ✓ "quoted"' })]);
    await r.waitFor(EVENT_NAMES.length);
    await queues.idle();

    // Assess (deduplicated by delivery id, as a receiver does: delivery is at least once)
    const unique = [...new Map(r.received.map((x) => [x.headers['x-webhook-id'], x])).values()];
    expect(unique.map((x) => x.headers['x-webhook-event']).sort()).toEqual([...EVENT_NAMES].sort());
    for (const x of r.received) {
      const payload = JSON.parse(x.body);
      expect(x.body).toBe(JSON.stringify(payload)); // compact: exactly the bytes a receiver re-serialises
      expect(payload).toEqual({ event: x.headers['x-webhook-event'], data: { example: x.headers['x-webhook-event'], text: 'olá ✓ "quoted"' } });
      expect(x.headers['content-type']).toBe('application/json');
      expect(verifyHex(x.body, x.headers['x-webhook-signature'], s.secret)).toBe(true);
      expect(verifyHex(x.body, x.headers['x-webhook-signature'], `${s.secret}x`)).toBe(false);
      expect(verifyStandard(x, s.secret)).toBe(true);
      expect(x.headers['x-webhook-id']).toBe(x.headers['webhook-id']);
      // The time of sending to the millisecond; the Standard Webhooks timestamp is its whole second.
      expect(x.headers['x-webhook-timestamp']).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(Math.floor(Date.parse(x.headers['x-webhook-timestamp'] as string) / 1000)).toBe(Number(x.headers['webhook-timestamp']));
      expect(Math.abs(Date.parse(x.headers['x-webhook-timestamp'] as string) - Date.now())).toBeLessThan(30_000);
    }
  }, 90_000); // the file's first test also loads the workers: on a loaded 2-core machine that alone took over 30 s

  it('leaves nothing behind once every delivery is done: no outbox item, no lane item', async () => {
    // Prepare: one subscription (each event's only delivery goes out at once) and one with a receiver that fails
    // once (its deliveries wait in lanes for a while).
    const t = await newTenant();
    const ok = await receiver();
    let failures = 1;
    const flaky = await receiver(() => (failures-- > 0 ? { status: 500 } : { status: 200 }));
    await subscribe(t, ok.url);
    await subscribe(t, flaky.url, ['contact.updated']);

    // Act: a few events on two contacts, and one without an ordering key.
    for (const c of ['p', 'q', 'p']) await commit([], [newEvent(t.businessId, 'contact.updated', { contact_id: c, changed_fields: ['name'] })]);
    await commit([], [newEvent(t.businessId, 'funnel_stage.created', { id: 'stage-x' })]);
    await ok.waitFor(4);
    await flaky.waitFor(4);
    await queues.idle();

    // Assess
    expect(await outboxItemsOf(t.businessId)).toEqual([]);
    const leftovers = await scanTable({ FilterExpression: 'begins_with(pk, :p) AND #t = :lane', ExpressionAttributeNames: { '#t': 'type' }, ExpressionAttributeValues: { ':p': `B#${t.businessId}#`, ':lane': 'lane' } });
    expect(leftovers).toEqual([]);
  });

  it('delivers only the events a subscription names, once per subscription', async () => {
    const t = await newTenant();
    const r1 = await receiver();
    const r2 = await receiver();
    await subscribe(t, r1.url, ['contact.created']);
    await subscribe(t, r2.url, ['message.sent', 'contact.created']);
    await commit([], [newEvent(t.businessId, 'contact.created', { contact_id: 'c1' }), newEvent(t.businessId, 'message.sent', { id: 'm1' })]);
    await queues.idle();
    expect(r1.received.map((x) => x.headers['x-webhook-event'])).toEqual(['contact.created']);
    expect(r2.received.map((x) => x.headers['x-webhook-event']).sort()).toEqual(['contact.created', 'message.sent']);
    expect(r1.received[0].headers['x-webhook-id']).not.toBe(r2.received.find((x) => x.headers['x-webhook-event'] === 'contact.created')!.headers['x-webhook-id']);
  });

  it('retries a receiver that fails 3 times with the same delivery id, and records each attempt', async () => {
    // Prepare
    const t = await newTenant();
    const r = await receiver((_req, i) => ({ status: i < 3 ? 500 : 200 }));
    const s = await subscribe(t, r.url);

    // Act
    // Members out of name order, at two depths: every attempt must carry the same bytes all the same.
    await commit([], [newEvent(t.businessId, 'contact.created', { contact_id: 'c-retry', name: 'Ana', position: 2, color: '#10b981', created_at: 'now', updated_at: 'now', a_later: { z: 1, b: [{ y: 2, c: 3 }] } })]);
    await r.waitFor(4);
    await queues.idle();

    // Assess
    const ids = r.received.map((x) => x.headers['x-webhook-id']);
    expect(new Set(ids).size).toBe(1);
    expect(r.received).toHaveLength(4);
    expect(new Set(r.received.map((x) => x.body)).size).toBe(1);
    for (const x of r.received) expect(verifyHex(x.body, x.headers['x-webhook-signature'], s.secret)).toBe(true);
    // Backoff: each gap at least the previous one's base (0.05 s, ×2, -20 % jitter), less 5 ms: the gaps are measured
    // where the attempts arrive, so one attempt's connection time can shorten the next gap by a few milliseconds.
    const gaps = r.received.slice(1).map((x, i) => x.at - r.received[i].at);
    expect(gaps[0]).toBeGreaterThanOrEqual(30);
    expect(gaps[2]).toBeGreaterThanOrEqual(135);
    const list = await deliveries(t, s.id);
    expect(list.data).toHaveLength(1);
    const d = list.data[0];
    expect(d).toMatchObject({ id: ids[0], event: 'contact.created', status: 'delivered', attemptCount: 4, payload: { event: 'contact.created', data: { contact_id: 'c-retry', name: 'Ana', position: 2, color: '#10b981', created_at: 'now', updated_at: 'now', a_later: { z: 1, b: [{ y: 2, c: 3 }] } } } });
    expect(d.attempts.map((a: any) => a.statusCode)).toEqual([500, 500, 500, 200]);
    expect(d.attempts.map((a: any) => a.attempt)).toEqual([1, 2, 3, 4]);
    for (const a of d.attempts) {
      expect(a).toEqual({ attempt: expect.any(Number), at: expect.any(String), statusCode: expect.any(Number), durationMs: expect.any(Number), error: a.statusCode === 200 ? null : 'HTTP 500' });
    }
  });

  it('retries a failed first attempt while a slower one of the same batch still holds the batch\'s record back', async () => {
    // Prepare: two subscriptions of one business, so both first attempts share a batch and its one write
    const t = await newTenant();
    const failing = await receiver((_req, i) => ({ status: i === 0 ? 500 : 200 }));
    const slow = await receiver(() => ({ status: 200, delayMs: 1500 }));
    const s = await subscribe(t, failing.url);
    await subscribe(t, slow.url);

    // Act: the retry (due after 0.05 s) comes while the batch waits 1.5 s for the slow receiver
    await commit([], [newEvent(t.businessId, 'message.sent', { id: 'm-batch' })]);
    await failing.waitFor(2);
    await queues.idle();

    // Assess
    const d = (await deliveries(t, s.id)).data[0];
    expect(d).toMatchObject({ status: 'delivered', attemptCount: 2 });
    expect(d.attempts.map((a: any) => a.statusCode)).toEqual([500, 200]);
    expect(new Set(failing.received.map((x) => x.headers['x-webhook-id'])).size).toBe(1);
  });

  it("records a delivery acknowledged in time without waiting for a slow receiver of the same batch, and sends the next event of its lane", async () => {
    // Prepare: two subscriptions of one business (their first attempts share a batch); one receiver takes 2.5 s (within
    // the tests' 3 s time-out)
    const t = await newTenant();
    const fast = await receiver(() => ({ status: 204 }));
    const slow = await receiver(() => ({ status: 200, delayMs: 2500 }));
    const s = await subscribe(t, fast.url);
    await subscribe(t, slow.url, ['contact.created']);

    // Act: two events of one contact; the second waits in the fast subscription's lane for the first's record
    await commit([], [newEvent(t.businessId, 'contact.created', { contact_id: 'c-slow-batch' })]);
    await commit([], [newEvent(t.businessId, 'contact.updated', { contact_id: 'c-slow-batch', changed_fields: ['name'] })]);
    await fast.waitFor(2);
    const recorded = (await deliveries(t, s.id)).data.find((d: any) => d.event === 'contact.created');
    await queues.idle();

    // Assess: both reached the fast receiver, in order, before the slow one answered (the second polls its lane in
    // whole seconds, SQS's delays)
    expect(fast.received.map((r) => JSON.parse(r.body).event)).toEqual(['contact.created', 'contact.updated']);
    expect(slow.received).toHaveLength(1);
    expect(fast.received[1].at).toBeLessThan(slow.received[0].at + 2500);
    expect(recorded).toMatchObject({ status: 'delivered' });
  });

  it('takes any 2xx as delivered, whatever its body: a receiver answering 2 MB gets the event once', async () => {
    const t = await newTenant();
    const r = await receiver(() => ({ status: 200, body: Buffer.alloc(2 * 1024 * 1024, 'x') }));
    const s = await subscribe(t, r.url);
    await commit([], [newEvent(t.businessId, 'message.sent', { id: 'm-big-answer' })]);
    await r.waitFor(1);
    await queues.idle();
    expect(r.received).toHaveLength(1);
    expect((await deliveries(t, s.id)).data[0]).toMatchObject({ status: 'delivered', attemptCount: 1, attempts: [{ statusCode: 200, error: null }] });
    const test = await invoke('POST /user-webhooks/{id}/test', { apiKey: t.apiKey, params: { id: s.id } });
    expect(test.body.data).toMatchObject({ success: true, statusCode: 200, error: null });
  });

  it('stops a pending delivery once the subscription no longer names its event, and refuses to redeliver it (409 event_unsubscribed)', async () => {
    // Prepare: the first attempt fails; the retry comes after the subscription dropped the event
    const t = await newTenant();
    let dropped: Promise<unknown> | undefined;
    const r = await receiver((_req, i) => {
      if (i === 0) dropped = invoke('PATCH /user-webhooks/{id}', { apiKey: t.apiKey, params: { id: s.id }, body: { events: ['contact.created'] } });
      return { status: i === 0 ? 500 : 200, delayMs: i === 0 ? 300 : 0 };
    });
    const s = await subscribe(t, r.url, ['funnel_stage.created', 'contact.created']);

    // Act
    await commit([], [newEvent(t.businessId, 'funnel_stage.created', { id: 'stage-dropped' })]);
    await r.waitFor(1);
    expect((await dropped as { status: number }).status).toBe(200);
    await queues.idle();

    // Assess
    expect(r.received).toHaveLength(1);
    const d = (await deliveries(t, s.id)).data[0];
    expect(d).toMatchObject({ event: 'funnel_stage.created', status: 'failed', failureReason: 'event_unsubscribed', attemptCount: 1 });
    const again = await invoke('POST /user-webhooks/{id}/deliveries/{deliveryId}/redeliver', { apiKey: t.apiKey, params: { id: s.id, deliveryId: d.id } });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe('event_unsubscribed');
    await commit([], [newEvent(t.businessId, 'contact.created', { contact_id: 'still-named' })]);
    await r.waitFor(2);
    expect(r.received[1].headers['x-webhook-event']).toBe('contact.created');
  });

  it('honours Retry-After', async () => {
    const t = await newTenant();
    const r = await receiver((_req, i) => (i === 0 ? { status: 503, headers: { 'Retry-After': '1' } } : { status: 200 }));
    await subscribe(t, r.url);
    await commit([], [newEvent(t.businessId, 'message.sent', { id: 'm' })]);
    await r.waitFor(2);
    expect(r.received[1].at - r.received[0].at).toBeGreaterThanOrEqual(950);
  });

  it('retries a receiver that times out', async () => {
    const t = await newTenant();
    const r = await receiver((_req, i) => ({ status: 200, delayMs: i === 0 ? 3500 : 0 }));
    const s = await subscribe(t, r.url);
    await commit([], [newEvent(t.businessId, 'message.sent', { id: 'm' })]);
    await r.waitFor(2);
    await queues.idle();
    const d = (await deliveries(t, s.id)).data[0];
    expect(d.status).toBe('delivered');
    expect(d.attempts[0]).toMatchObject({ statusCode: null, error: expect.stringMatching(/^timeout/) });
    expect(d.attempts[0].durationMs).toBeGreaterThanOrEqual(2900);
  });

  it('gives up after the last attempt, disabling the subscription that failed them all, and can redeliver the same delivery once it is on again', async () => {
    const t = await newTenant();
    let healthy = false;
    const r = await receiver(() => ({ status: healthy ? 204 : 500 }));
    const s = await subscribe(t, r.url);
    await commit([], [newEvent(t.businessId, 'contact.updated', { contact_id: 'c-x' })]);
    await r.waitFor(5);
    await queues.idle();
    let d = (await deliveries(t, s.id)).data[0];
    expect(d).toMatchObject({ status: 'failed', attemptCount: 5, failureReason: 'max_attempts' });
    expect(r.received).toHaveLength(5);
    // Every attempt of the delivery failed, nothing was delivered meanwhile: a lasting failure (about 3 days deployed).
    expect(await getSubscription(t.businessId, s.id)).toMatchObject({ enabled: false, disabledReason: 'failing' });

    healthy = true;
    expect((await invoke('PATCH /user-webhooks/{id}', { apiKey: t.apiKey, params: { id: s.id }, body: { enabled: true } })).status).toBe(200);
    const res = await invoke('POST /user-webhooks/{id}/deliveries/{deliveryId}/redeliver', { apiKey: t.apiKey, params: { id: s.id, deliveryId: d.id } });
    expect(res.status).toBe(202);
    // A fresh series: what the earlier one came to is no longer the delivery's outcome.
    expect(res.body.data).toMatchObject({ id: d.id, status: 'pending', failedAt: null, failureReason: null, deliveredAt: null });
    await r.waitFor(6);
    await queues.idle();
    d = (await deliveries(t, s.id)).data[0];
    expect(d).toMatchObject({ status: 'delivered', attemptCount: 6, failedAt: null, failureReason: null, deliveredAt: expect.any(String) });
    expect(r.received[5].headers['x-webhook-id']).toBe(d.id);
    const unknown = await invoke('POST /user-webhooks/{id}/deliveries/{deliveryId}/redeliver', { apiKey: t.apiKey, params: { id: s.id, deliveryId: '00000000-0000-4000-8000-000000000000' } });
    expect(unknown.status).toBe(404);
  });

  it('signs with the new secret as soon as it is regenerated', async () => {
    // Prepare
    const t = await newTenant();
    const r = await receiver();
    const s = await subscribe(t, r.url);
    await commit([], [newEvent(t.businessId, 'contact.created', { contact_id: 'a' })]);
    await r.waitFor(1);

    // Act
    const regen = await invoke('POST /user-webhooks/{id}/regenerate-secret', { apiKey: t.apiKey, params: { id: s.id } });
    await commit([], [newEvent(t.businessId, 'contact.created', { contact_id: 'b' })]);
    await r.waitFor(2);

    // Assess
    const [first, second] = r.received;
    const secret2 = regen.body.data.secret as string;
    expect(verifyHex(first.body, first.headers['x-webhook-signature'], s.secret)).toBe(true);
    expect(verifyHex(second.body, second.headers['x-webhook-signature'], secret2)).toBe(true);
    expect(verifyHex(second.body, second.headers['x-webhook-signature'], s.secret)).toBe(false);
    expect(verifyStandard(second, secret2)).toBe(true);
    expect(verifyStandard(second, s.secret)).toBe(false);
  });

  it('of ten regenerations at once, answers one secret (the one that signs) and 409 secret_regenerated to the others', async () => {
    // Prepare
    const t = await newTenant();
    const r = await receiver();
    const s = await subscribe(t, r.url);

    // Act
    const answers = await Promise.all(Array.from({ length: 10 }, () => invoke('POST /user-webhooks/{id}/regenerate-secret', { apiKey: t.apiKey, params: { id: s.id } })));
    await commit([], [newEvent(t.businessId, 'contact.created', { contact_id: 'c' })]);
    await r.waitFor(1);

    // Assess
    const won = answers.filter((a) => a.status === 200);
    expect(won).toHaveLength(1);
    expect(answers.filter((a) => a.status !== 200).map((a) => [a.status, a.body.error])).toEqual(Array(9).fill([409, 'secret_regenerated']));
    const [delivery] = r.received;
    expect(verifyHex(delivery.body, delivery.headers['x-webhook-signature'], won[0].body.data.secret)).toBe(true);
  });

  it('delivers an event whose publish was lost (crash after the state change) through the outbox sweep', sweepTest(async () => {
    // Prepare: the state change and its outbox item committed, then the function "dies" before publishing.
    const t = await newTenant();
    const r = await receiver();
    const s = await subscribe(t, r.url);
    const e = { ...newEvent(t.businessId, 'contact.deleted', { contact_id: 'gone' }), createdAt: new Date(Date.now() - 120_000).toISOString() };
    await db.send(new TransactWriteCommand({ TransactItems: [outboxPut(e)] }));
    await queues.idle();
    expect(r.received).toHaveLength(0);

    // Act: the sweep as deployed (items older than a minute)
    const published = await sweepOutbox();
    await r.waitFor(1);
    await queues.idle();

    // Assess
    expect(published).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(r.received[0].body)).toEqual({ event: 'contact.deleted', data: { contact_id: 'gone' } });
    expect(verifyHex(r.received[0].body, r.received[0].headers['x-webhook-signature'], s.secret)).toBe(true);
    // Fanned out means gone from the outbox: a second sweep sends nothing again.
    await sweepOutbox();
    await queues.idle();
    expect(r.received.filter((x) => JSON.parse(x.body).data.contact_id === 'gone')).toHaveLength(1);
  }));

  it('never delivers a stage change before the creation of its contact, even while the creation is retried', async () => {
    // Prepare: the receiver refuses the first two attempts of contact.created.
    const t = await newTenant();
    let refused = 0;
    const accepted: Received[] = [];
    const r = await receiver((req) => {
      if (req.headers['x-webhook-event'] === 'contact.created' && refused++ < 2) return { status: 500 };
      accepted.push(req);
      return { status: 200 };
    });
    await subscribe(t, r.url);

    // Act
    await commit([], [newEvent(t.businessId, 'contact.created', { contact_id: 'k1' })]);
    await commit([], [newEvent(t.businessId, 'contact.stage_changed', { contact_id: 'k1', new_stage_id: 's1' })]);
    await commit([], [newEvent(t.businessId, 'contact.updated', { contact_id: 'k1' })]);
    await r.waitFor(5);
    await queues.idle();

    // Assess: what the receiver accepted, in order (a repeat of one id, if any, is where its first copy was)
    const firstOfEach = [...new Map(accepted.map((x) => [x.headers['x-webhook-id'], x])).values()];
    expect(firstOfEach.map((x) => x.headers['x-webhook-event'])).toEqual(['contact.created', 'contact.stage_changed', 'contact.updated']);
    expect(r.received.slice(0, 3).map((x) => x.headers['x-webhook-event'])).toEqual(['contact.created', 'contact.created', 'contact.created']);
  });

  it('holds a later event of a contact back while an earlier one is lost, and delivers both in order once the sweep finds it', sweepTest(async () => {
    // Prepare: the publish of contact.created is lost (its outbox item stays), then a later event of the same contact.
    const t = await newTenant();
    const r = await receiver();
    await subscribe(t, r.url);
    const created = newEvent(t.businessId, 'contact.created', { contact_id: 'k2' });
    await db.send(new TransactWriteCommand({ TransactItems: [outboxPut(created)] }));
    await new Promise((res) => setTimeout(res, 5));
    await commit([], [newEvent(t.businessId, 'contact.stage_changed', { contact_id: 'k2' })]);

    // Act: the later event waits (its delivery polls its lane); then the sweep publishes the lost one.
    await new Promise((res) => setTimeout(res, 300));
    const beforeSweep = r.received.length;
    await sweepOutbox(0);
    await r.waitFor(2);

    // Assess
    expect(beforeSweep).toBe(0);
    expect(r.received.map((x) => x.headers['x-webhook-event'])).toEqual(['contact.created', 'contact.stage_changed']);
  }));

  it('disables the subscription when the receiver answers 410', async () => {
    const t = await newTenant();
    const r = await receiver(() => ({ status: 410 }));
    const s = await subscribe(t, r.url);
    await commit([], [newEvent(t.businessId, 'message.read', { id: 'm' })]);
    await r.waitFor(1);
    await queues.idle();
    await commit([], [newEvent(t.businessId, 'message.read', { id: 'm2' })]);
    await queues.idle();
    expect(r.received).toHaveLength(1);
    const got = await invoke('GET /user-webhooks/{id}', { apiKey: t.apiKey, params: { id: s.id } });
    expect(got.body.data).toMatchObject({ enabled: false, disabledReason: 'gone', disabledAt: expect.any(String) });
    expect((await deliveries(t, s.id)).data[0]).toMatchObject({ status: 'failed', failureReason: 'gone' });
  });

  it('disables a subscription that has been failing for longer than the limit', async () => {
    const t = await newTenant();
    const r = await receiver(() => ({ status: 500 }));
    const s = await subscribe(t, r.url);
    await updateSubscription(t.businessId, s.id, { failingSince: new Date(Date.now() - 4 * 86_400_000).toISOString() });
    await commit([], [newEvent(t.businessId, 'message.sent', { id: 'm' })]);
    await r.waitFor(1);
    await queues.idle();
    expect(await getSubscription(t.businessId, s.id)).toMatchObject({ enabled: false, disabledReason: 'failing' });
    expect(r.received).toHaveLength(1);
  });

  it('sends a signed test delivery and lists it among the deliveries', async () => {
    const t = await newTenant();
    const r = await receiver();
    const s = await subscribe(t, r.url, ['contact.created']);
    const res = await invoke('POST /user-webhooks/{id}/test', { apiKey: t.apiKey, params: { id: s.id } });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ deliveryId: expect.any(String), event: 'webhook.test', success: true, statusCode: 200, durationMs: expect.any(Number), error: null });
    expect(r.received).toHaveLength(1);
    expect(r.received[0].headers['x-webhook-event']).toBe('webhook.test');
    expect(verifyHex(r.received[0].body, r.received[0].headers['x-webhook-signature'], s.secret)).toBe(true);
    const list = await deliveries(t, s.id);
    expect(list.data[0]).toMatchObject({ id: res.body.data.deliveryId, event: 'webhook.test', status: 'delivered' });

    r.respond = () => ({ status: 500 });
    const failing = await invoke('POST /user-webhooks/{id}/test', { apiKey: t.apiKey, params: { id: s.id } });
    expect(failing.body.data).toMatchObject({ success: false, statusCode: 500, error: 'HTTP 500' });
  });

  it('reports a record that is not an event as a partial batch failure and still fans out the others', async () => {
    // Prepare
    const { handler } = await import('#functions/workers/event-fanout.ts');
    const t = await newTenant();
    const r = await receiver();
    await subscribe(t, r.url);
    const e = newEvent(t.businessId, 'message.delivered', { id: 'm' });
    await db.send(new TransactWriteCommand({ TransactItems: [outboxPut(e)] }));
    const record = (messageId: string, body: string) => ({ messageId, body, receiptHandle: messageId, attributes: {}, messageAttributes: {}, md5OfBody: '', eventSource: 'aws:sqs', eventSourceARN: 'arn', awsRegion: 'us-east-1' }) as any;

    // Act
    const out = await handler({ Records: [record('good', JSON.stringify(e)), record('bad', '{"not":"an event"}')] });
    await r.waitFor(1);

    // Assess
    expect(out).toEqual({ batchItemFailures: [{ itemIdentifier: 'bad' }] });
    expect(r.received[0].headers['x-webhook-event']).toBe('message.delivered');
  });

  it('pages deliveries newest first and refuses a forged cursor', async () => {
    const t = await newTenant();
    const other = await newTenant();
    const r = await receiver();
    const s = await subscribe(t, r.url);
    const so = await subscribe(other, r.url);
    for (let i = 0; i < 3; i++) await invoke('POST /user-webhooks/{id}/test', { apiKey: t.apiKey, params: { id: s.id } });
    await invoke('POST /user-webhooks/{id}/test', { apiKey: other.apiKey, params: { id: so.id } });
    const p1 = await invoke('GET /user-webhooks/{id}/deliveries', { apiKey: t.apiKey, params: { id: s.id }, query: { limit: '2' } });
    const p2 = await invoke('GET /user-webhooks/{id}/deliveries', { apiKey: t.apiKey, params: { id: s.id }, query: { limit: '2', cursor: p1.body.next_cursor } });
    expect(p1.body.data).toHaveLength(2);
    expect(p1.body.data[0].createdAt >= p1.body.data[1].createdAt).toBe(true);
    expect(p2.body.data).toHaveLength(1);
    expect(p2.body.next_cursor).toBeNull();
    const whole = await invoke('GET /user-webhooks/{id}/deliveries', { apiKey: t.apiKey, params: { id: s.id }, query: { limit: '3' } });
    expect([whole.body.data.length, whole.body.next_cursor]).toEqual([3, null]);
    const otherPage = await invoke('GET /user-webhooks/{id}/deliveries', { apiKey: other.apiKey, params: { id: so.id }, query: { limit: '1' } });
    const forged = await invoke('GET /user-webhooks/{id}/deliveries', { apiKey: t.apiKey, params: { id: s.id }, query: { cursor: Buffer.from(JSON.stringify({ pk: 'x', gsi1pk: 'y' })).toString('base64url') } });
    const garbage = await invoke('GET /user-webhooks/{id}/deliveries', { apiKey: t.apiKey, params: { id: s.id }, query: { cursor: 'not-a-cursor' } });
    expect(forged.status).toBe(400);
    expect(garbage.status).toBe(400);
    expect(otherPage.status).toBe(200);
  });
});
