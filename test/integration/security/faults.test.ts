/**
 * Faults: the upstream sandbox answering 5xx, throttling, hanging and staying down; DynamoDB throttling injected
 * into the table client; queue workers crashing mid-batch and malformed messages; a webhook receiver down for a
 * while or for good. Nothing is lost or done twice: each message reaches the upstream once, each event reaches
 * the webhook once, and what cannot be processed ends in the dead-letter list (or as a failed delivery) with a reason.
 */
import { randomUUID } from 'node:crypto';
import { startHarness, randomPhone, type Harness } from '../messages/harness.ts';
import { startReceiver } from '../../support/hardening.ts';
import { inOwnTable } from '../../support/table.ts';

process.env.LIMIT_REQUESTS_PER_MINUTE = '1000000';
process.env.LIMIT_MESSAGES_PER_MINUTE = '1000000';
process.env.LIMIT_BULK_PER_MINUTE = '1000000';
process.env.UPSTREAM_MAX_ATTEMPTS = '3';
process.env.WEBHOOK_RETRY_BASE_SECONDS = '0.05';
process.env.WEBHOOK_RETRY_FACTOR = '2';
process.env.WEBHOOK_MAX_ATTEMPTS = '5';
process.env.WEBHOOK_TIMEOUT_MS = '1000';
process.env.WEBHOOK_LANE_WAIT_SECONDS = '0.05';

let h: Harness;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let queues: import('#infra/local/queues.ts').LocalQueues;
let dynamo: import('@aws-sdk/client-dynamodb').DynamoDBClient;
const survived: string[] = [];

/** Worker behaviour the tests switch on: crash mid-batch, or report poisoned records as failed. */
const crash = { events: 0, deliveries: 0 };
const poison = 'hardening-poison';

beforeAll(async () => {
  h = await startHarness();
  receiver = await startReceiver();
  ({ dynamo } = await import('#shared/store/client.ts'));
  const { startQueues } = await import('../../support/queues.ts');
  queues = await startQueues({
    retryDelayMs: 30,
    load: async (worker) => {
      const real = (await import(`../../../functions/${worker.handler}.ts`)).handler;
      return async (event: any, context: any) => {
        const bad = event.Records.filter((r: any) => r.body.includes(poison)).map((r: any) => ({ itemIdentifier: r.messageId }));
        const good = event.Records.filter((r: any) => !r.body.includes(poison));
        // A crash mid-batch: the first half of the records is done, then the worker dies; the whole batch comes
        // back, and the done half must not be done twice.
        const crashing = (worker.queue === 'events' && crash.events > 0) || (worker.queue === 'webhook-deliveries' && crash.deliveries > 0);
        if (crashing && good.length > 0) {
          if (worker.queue === 'events') crash.events--;
          else crash.deliveries--;
          await real({ Records: good.slice(0, Math.ceil(good.length / 2)) }, context);
          throw new Error(`simulated crash of the ${worker.queue} worker mid-batch`);
        }
        const res = good.length ? await real({ Records: good }, context) : { batchItemFailures: [] };
        return { batchItemFailures: [...(res?.batchItemFailures ?? []), ...bad] };
      };
    },
  });
}, 30_000);

afterAll(async () => {
  await queues?.stop();
  await h?.stop();
  await receiver?.stop();
  console.log(`hardening: faults: ${survived.length} survived with nothing lost or doubled — ${survived.join('; ')}`);
});

const fault = async (kind: string, count: number, target = 'messages') => {
  const res = await h.sandboxCall('POST', '/__sandbox/faults', { kind, count, target });
  expect(res.status).toBe(200);
};
const template = (to: string) => ({ to, type: 'template', templateName: 'hello_world', language: 'en_US' });

describe('upstream faults', () => {
  it.each([
    ['answers 5xx twice', 'error500', 2],
    ['throttles twice', 'throttle', 2],
    ['hangs past the time-out once', 'hang', 1],
  ])('sends exactly once when the upstream %s', async (label, kind, count) => {
    // Prepare
    const t = await h.newTenant();
    const to = randomPhone();
    await fault(kind as string, count as number);

    // Act
    const res = await h.send(t.apiKey, template(to));

    // Assess: 200, stored as sent, one message at the upstream.
    expect(res.status).toBe(200);
    expect((await h.invoke('GET /messages/v1/{id}', { apiKey: t.apiKey, params: { id: res.body.data.id } })).body.message.status).toBe('sent');
    expect(await h.sent(to)).toHaveLength(1);
    survived.push(`upstream ${label}`);
  }, 30_000);

  it('stores a send as failed when the upstream stays down, and a retry later sends it once', async () => {
    // Prepare: every attempt of the send fails.
    const t = await h.newTenant();
    const to = randomPhone();
    await fault('error500', 3);

    // Act
    const res = await h.send(t.apiKey, template(to));

    // Assess: a retryable error naming the stored message; nothing reached the upstream.
    expect(res.status).toBe(502);
    expect(res.body).toMatchObject({ error: 'upstream_unavailable', message: expect.any(String), data: { id: expect.any(String), status: 'failed' } });
    expect(await h.sent(to)).toHaveLength(0);

    // Act: the upstream is back; the client retries.
    const retried = await h.invoke('POST /messages/v1/{id}/retry', { apiKey: t.apiKey, params: { id: res.body.data.id } });

    // Assess
    expect(retried.status).toBe(200);
    expect(retried.body.data).toMatchObject({ id: res.body.data.id, status: 'sent', retriedAt: expect.any(String) });
    expect(await h.sent(to)).toHaveLength(1);
    expect((await h.invoke('POST /messages/v1/{id}/retry', { apiKey: t.apiKey, params: { id: res.body.data.id } })).body.error).toBe('invalid_state');
    expect(await h.sent(to)).toHaveLength(1);
    survived.push('upstream down for every attempt (stored failed, retried once)');
  }, 30_000);
});

describe('a send cut off after the upstream accepted it, before its settle write', () => {
  /** Fails the next write of a sent message (its wamid pointer with its message.sent), as a function dying there would. */
  const crashSettleOnce = () => {
    const name = `hardening-settle-crash-${randomUUID()}`;
    let armed = true;
    dynamo.middlewareStack.add((next) => async (args) => {
      const input = JSON.stringify((args as { input?: unknown }).input ?? {});
      if (armed && input.includes('"TransactItems"') && input.includes('message.sent') && /"type":(\{"S":)?"wamid"/.test(input)) {
        armed = false;
        throw Object.assign(new Error('Injected: the function died before the settle write'), { name: 'InjectedCrash' });
      }
      return next(args);
    }, { step: 'initialize', name });
    return { fired: () => !armed, remove: () => dynamo.middlewareStack.remove(name) };
  };
  const subscribe = async (apiKey: string, events: string[]) => {
    const res = await h.invoke('POST /user-webhooks', { apiKey, body: { name: 'write-ahead', url: `${receiver.url}?k=${randomUUID()}`, events } });
    expect(res.status).toBe(201);
    return res.body.data as { id: string; url: string };
  };
  const deliveries = (url: string) => receiver.received.filter((r) => url.endsWith(r.url)).map((r) => JSON.parse(r.body) as { event: string; data: Record<string, any> });
  const accepted = async (to: string) => (await h.sandboxCall('GET', `/__sandbox/sent?to=${encodeURIComponent(to)}&detail=1`)).body as { wamid: string; payload: Record<string, any> }[];
  const getMessage = async (apiKey: string, id: string) => (await h.invoke('GET /messages/v1/{id}', { apiKey, params: { id } })).body.message;

  it('an idempotent repeat sends nothing more; the status webhook settles it sent with its wamid; one message.sent', async () => {
    // Prepare
    const t = await h.newTenant();
    const hook = await subscribe(t.apiKey, ['message.sent']);
    const to = randomPhone();
    const key = randomUUID();
    const crash = crashSettleOnce();

    // Act: the upstream accepts, the settle write never happens.
    let first;
    try {
      first = await h.send(t.apiKey, template(to), { 'idempotency-key': key });
    } finally {
      crash.remove();
    }

    // Assess: the client saw a 5xx; the upstream has one message, which names the recorded message.
    expect(crash.fired()).toBe(true);
    expect(first.status).toBe(500);
    const out = await accepted(to);
    expect(out).toHaveLength(1);
    const messageId = out[0].payload.biz_opaque_callback_data as string;
    expect(await getMessage(t.apiKey, messageId)).toMatchObject({ id: messageId, status: 'queued', wamid: null });

    // Act: the client repeats with the same key while nothing settled the send.
    const repeat = await h.send(t.apiKey, template(to), { 'idempotency-key': key });

    // Assess: refused as in progress, to be retried, nothing sent again.
    expect(repeat.status).toBe(409);
    expect(repeat.body).toMatchObject({ error: 'idempotency_in_progress' });
    expect(repeat.headers['retry-after']).toBe('1');
    expect(await accepted(to)).toHaveLength(1);

    // Act: the upstream's status webhook for the message arrives.
    await h.status(out[0].wamid, 'delivered');
    await queues.idle(30_000);

    // Assess: sent (then delivered) with the upstream's wamid; the repeat now answers with that message; one event.
    expect(await getMessage(t.apiKey, messageId)).toMatchObject({ status: 'delivered', wamid: out[0].wamid, sentAt: expect.any(String) });
    const again = await h.send(t.apiKey, template(to), { 'idempotency-key': key });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ messages: [{ id: messageId, wamid: out[0].wamid }], data: { id: messageId } });
    expect(await accepted(to)).toHaveLength(1);
    await queues.idle(30_000);
    const sentEvents = deliveries(hook.url).filter((d) => d.event === 'message.sent');
    expect(sentEvents).toHaveLength(1);
    expect(sentEvents[0].data).toMatchObject({ message_id: messageId, wamid: out[0].wamid, status: 'sent' });
    survived.push('a crash between the upstream answer and the settle write (no duplicate, settled by the status webhook)');
  }, 60_000);

  it("answers a repeat on the Cloud API route while the send is in flight as Graph's temporary error (503, code 2), sending nothing more", async () => {
    // Prepare
    const t = await h.newTenant();
    const to = randomPhone();
    const body = { messaging_product: 'whatsapp', to: to.slice(1), type: 'template', template: { name: 'hello_world', language: { code: 'en_US' } } };
    const post = () => h.invoke('POST /{version}/{id}/messages', { apiKey: t.apiKey, body, headers: { 'idempotency-key': key }, params: { version: 'v23.0', id: t.phoneNumberId } });
    const key = randomUUID();
    const crash = crashSettleOnce();
    try {
      await post();
    } finally {
      crash.remove();
    }
    expect(crash.fired()).toBe(true);

    // Act
    const repeat = await post();

    // Assess
    expect([repeat.status, repeat.headers['retry-after']]).toEqual([503, '1']);
    expect(repeat.body.error).toMatchObject({ code: 2, type: 'OAuthException', message: expect.stringContaining('still being processed') });
    expect(await accepted(to)).toHaveLength(1);
  });

  // In a table of its own: the sweep fails every unconfirmed send of its table, other files' sends in flight too.
  it('with the client\'s own callback data the sweep fails the unconfirmed send once; the client\'s value comes back in status events', () => inOwnTable(async () => {
    // Prepare
    const t = await h.newTenant();
    const hook = await subscribe(t.apiKey, ['message.sent', 'message.failed', 'message.delivered']);
    const to = randomPhone();
    const crash = crashSettleOnce();

    // Act: cut off after the upstream accepted; the status names the client's value, not the message.
    let first;
    try {
      first = await h.send(t.apiKey, { ...template(to), biz_opaque_callback_data: 'pedido-42' });
    } finally {
      crash.remove();
    }
    expect(first.status).toBe(500);
    const out = await accepted(to);
    expect(out.map((o) => o.payload.biz_opaque_callback_data)).toEqual(['pedido-42']);
    await h.status(out[0].wamid, 'delivered');
    await queues.idle(30_000);
    const { sweepPendingSends } = await import('#shared/messages/pending-sweep.ts');
    expect(await sweepPendingSends(0)).toBeGreaterThanOrEqual(1);
    expect(await sweepPendingSends(0)).toBe(0);
    await queues.idle(30_000);

    // Assess: failed as unconfirmed, one message.failed, nothing sent twice.
    const failed = deliveries(hook.url).filter((d) => d.event === 'message.failed');
    expect(failed).toHaveLength(1);
    const messageId = failed[0].data.message_id;
    expect(await getMessage(t.apiKey, messageId)).toMatchObject({ status: 'failed', error: { code: 'send_unconfirmed' } });
    expect(await accepted(to)).toHaveLength(1);

    // Act + Assess: a normal send with the client's value; its status event carries the value unchanged.
    const ok = await h.send(t.apiKey, { ...template(to), biz_opaque_callback_data: 'pedido-43' });
    expect(ok.status).toBe(200);
    await h.status(ok.body.messages[0].wamid, 'delivered');
    await queues.idle(30_000);
    const delivered = deliveries(hook.url).filter((d) => d.event === 'message.delivered' && d.data.message_id === ok.body.data.id);
    expect(delivered).toHaveLength(1);
    expect(delivered[0].data.biz_opaque_callback_data).toBe('pedido-43');
    survived.push('an unconfirmed send with the client\'s own callback data (failed once by the sweep)');
  }), 60_000);
});

describe('DynamoDB throttling', () => {
  /** Throws ProvisionedThroughputExceededException for the next `n` table calls (inside the SDK's retry loop). */
  const throttle = (n: number) => {
    const name = `hardening-throttle-${randomUUID()}`;
    let left = n;
    dynamo.middlewareStack.add((next) => async (args) => {
      if (left > 0) {
        left--;
        throw Object.assign(new Error('Injected: the level of configured provisioned throughput for the table was exceeded'), {
          name: 'ProvisionedThroughputExceededException', $fault: 'client', $metadata: { httpStatusCode: 400 },
        });
      }
      return next(args);
    }, { step: 'finalizeRequest', priority: 'low', name });
    return { left: () => left, remove: () => dynamo.middlewareStack.remove(name) };
  };

  it('absorbs short throttling: every request succeeds, each contact stored once', async () => {
    // Prepare
    const t = await h.newTenant();
    const phones = Array.from({ length: 10 }, randomPhone);
    const injected = throttle(15);

    // Act
    let res;
    try {
      res = await Promise.all(phones.map((phone_number) => h.invoke('POST /contacts/v1', { apiKey: t.apiKey, body: { phone_number } })));
    } finally {
      injected.remove();
    }

    // Assess
    expect(injected.left()).toBe(0);
    expect(res.map((r) => r.status)).toEqual(phones.map(() => 201));
    const listed = (await h.invoke('GET /contacts/v1', { apiKey: t.apiKey, query: { limit: '100' } })).body.contacts;
    expect(listed.map((c: any) => c.phone_number).sort()).toEqual([...phones].sort());
    survived.push('DynamoDB throttling of 15 calls under 10 concurrent writes');
  }, 30_000);

  it('answers 503 with Retry-After when throttling outlasts the retries, and the request can be repeated', async () => {
    // Prepare
    const t = await h.newTenant();
    const phone = randomPhone();
    const injected = throttle(1_000_000);

    // Act
    let res;
    try {
      res = await h.invoke('POST /contacts/v1', { apiKey: t.apiKey, body: { phone_number: phone } });
    } finally {
      injected.remove();
    }

    // Assess: a retryable answer, not a 500; the repeat succeeds and stores one contact.
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ error: 'service_unavailable', message: expect.any(String) });
    expect(res.headers['retry-after']).toBe('1');
    const again = await h.invoke('POST /contacts/v1', { apiKey: t.apiKey, body: { phone_number: phone } });
    expect(again.status).toBe(201);
    expect((await h.invoke('GET /contacts/v1', { apiKey: t.apiKey })).body.contacts).toHaveLength(1);
    survived.push('DynamoDB throttling past the SDK retries (503, repeatable)');
  }, 30_000);

  it('answers 504 timeout, outcome unknown, when a request runs out of time; what it began still lands', async () => {
    // Prepare: every table write takes 300 ms; the function has 200 ms
    const t = await h.newTenant();
    const name = `hardening-slow-${randomUUID()}`;
    dynamo.middlewareStack.add((next, context) => async (args) => {
      if (/^(TransactWriteItems|PutItem|UpdateItem)Command$/.test(context.commandName ?? '')) await new Promise((r) => setTimeout(r, 300));
      return next(args);
    }, { step: 'initialize', name });

    // Act
    let res;
    try {
      res = await h.invoke('POST /funnel/v1/stages', { apiKey: t.apiKey, body: { name: 'Late' }, timeoutMs: 200 });
      await new Promise((r) => setTimeout(r, 1500));
    } finally {
      dynamo.middlewareStack.remove(name);
    }

    // Assess: not "unavailable, retry": the stage the request began was stored
    expect([res.status, res.body]).toEqual([504, { error: 'timeout', message: expect.stringContaining('may still have taken effect') }]);
    const stages = (await h.invoke('GET /funnel/v1/stages', { apiKey: t.apiKey })).body;
    expect(JSON.stringify(stages)).toContain('"Late"');
    survived.push('a request out of time (504, outcome unknown)');
  }, 30_000);
});

describe('workers and webhook receivers', () => {
  const subscribe = async (apiKey: string, events: string[]) => {
    const res = await h.invoke('POST /user-webhooks', { apiKey, body: { name: 'faults', url: `${receiver.url}?k=${randomUUID()}`, events } });
    expect(res.status).toBe(201);
    return res.body.data as { id: string; url: string };
  };
  const deliveriesTo = (url: string) => receiver.received.filter((r) => url.endsWith(r.url));
  const eventIds = (url: string) => deliveriesTo(url).map((r) => JSON.parse(r.body).data?.stage_id ?? JSON.parse(r.body).data?.message_id);
  const createStages = async (apiKey: string, n: number) => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) ids.push((await h.invoke('POST /funnel/v1/stages', { apiKey, body: { name: `F${i}` } })).body.stage.id);
    return ids;
  };

  it('delivers each event once when the fan-out and the delivery workers crash mid-batch', async () => {
    // Prepare
    const t = await h.newTenant();
    const hook = await subscribe(t.apiKey, ['funnel_stage.created']);
    await queues.idle();
    crash.events = 2;
    crash.deliveries = 2;

    // Act: concurrent creates, so that the workers get batches of several records.
    const stages = (await Promise.all(Array.from({ length: 8 }, (_, i) => h.invoke('POST /funnel/v1/stages', { apiKey: t.apiKey, body: { name: `C${i}` } })))).map((r) => r.body.stage.id);
    await queues.idle(30_000);

    // Assess: every stage's event arrived once; nothing was dead-lettered.
    expect(crash).toEqual({ events: 0, deliveries: 0 });
    expect(eventIds(hook.url).sort()).toEqual([...stages].sort());
    expect(queues.deadLetters.filter((d) => d.body.includes(t.businessId))).toEqual([]);
    survived.push('event fan-out and delivery workers crashing mid-batch (4 crashes)');
  }, 60_000);

  it('dead-letters malformed and poisoned messages with a reason, and processes the rest of their batches', async () => {
    // Prepare
    const t = await h.newTenant();
    const hook = await subscribe(t.apiKey, ['funnel_stage.created']);
    await queues.idle();
    const { enqueue } = await import('#shared/queue/queue.ts');

    // Act: a body that is not an event, and one the worker always fails, among real events.
    await enqueue('events', 'not json at all');
    await enqueue('events', { id: randomUUID(), businessId: t.businessId, event: 'funnel_stage.created', data: { note: poison } });
    const stages = await createStages(t.apiKey, 3);
    await queues.idle(30_000);

    // Assess
    expect(eventIds(hook.url).sort()).toEqual([...stages].sort());
    const dead = queues.deadLetters.filter((d) => d.body === 'not json at all' || d.body.includes(poison));
    expect(dead).toHaveLength(2);
    for (const d of dead) expect(d).toMatchObject({ queue: 'events', receiveCount: 5, reason: expect.stringMatching(/\w/) });
    survived.push('malformed and poisoned queue messages (dead-lettered with a reason after 5 receives)');
  }, 60_000);

  it('delivers everything once after a webhook receiver was down for a while', async () => {
    // Prepare
    const t = await h.newTenant();
    const hook = await subscribe(t.apiKey, ['funnel_stage.created']);
    await queues.idle();
    receiver.setDown(true);

    // Act: events while the receiver answers 503; it comes back before the attempts run out.
    const stages = await createStages(t.apiKey, 4);
    await new Promise((r) => setTimeout(r, 150));
    receiver.setDown(false);
    await queues.idle(30_000);

    // Assess: each once, in creation order (one ordering lane per business and event type or not, none lost).
    expect(eventIds(hook.url).sort()).toEqual([...stages].sort());
    const listed = (await h.invoke('GET /user-webhooks/{id}/deliveries', { apiKey: t.apiKey, params: { id: hook.id } })).body.data;
    expect(listed.filter((d: any) => d.status !== 'delivered')).toEqual([]);
    survived.push('webhook receiver down for a while (retried, each delivered once)');
  }, 60_000);

  it('keeps a delivery as failed with a reason when the receiver stays down, and redelivers it once on request', async () => {
    // Prepare
    const t = await h.newTenant();
    const hook = await subscribe(t.apiKey, ['funnel_stage.created']);
    await queues.idle();
    receiver.setDown(true);

    // Act: the attempts run out.
    const [stage] = await createStages(t.apiKey, 1);
    await queues.idle(30_000);
    receiver.setDown(false);
    const failed = (await h.invoke('GET /user-webhooks/{id}/deliveries', { apiKey: t.apiKey, params: { id: hook.id } })).body.data;

    // Assess: failed, with its attempts and a reason; nothing received.
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ status: 'failed', attemptCount: 5, failureReason: expect.stringMatching(/\w/) });
    expect(failed[0].attempts.map((a: any) => a.statusCode)).toEqual([503, 503, 503, 503, 503]);
    expect(deliveriesTo(hook.url)).toHaveLength(0);
    // Every attempt failed: the subscription is disabled until its owner turns it on again.
    const disabled = (await h.invoke('GET /user-webhooks/{id}', { apiKey: t.apiKey, params: { id: hook.id } })).body.data;
    expect(disabled).toMatchObject({ enabled: false, disabledReason: 'failing' });
    expect((await h.invoke('PATCH /user-webhooks/{id}', { apiKey: t.apiKey, params: { id: hook.id }, body: { enabled: true } })).status).toBe(200);

    // Act: redeliver.
    const again = await h.invoke('POST /user-webhooks/{id}/deliveries/{deliveryId}/redeliver', { apiKey: t.apiKey, params: { id: hook.id, deliveryId: failed[0].id } });
    await queues.idle(30_000);

    // Assess
    expect([200, 202]).toContain(again.status);
    expect(eventIds(hook.url)).toEqual([stage]);
    survived.push('webhook receiver down for good (failed with a reason, redelivered once)');
  }, 60_000);
});
