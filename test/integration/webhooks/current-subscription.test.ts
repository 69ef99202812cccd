/**
 * Deliveries follow the customer's changes: queue messages carry no URL and no secret, and a first
 * attempt already queued when the customer changes the URL, rotates the secret, disables or deletes the
 * subscription goes out as the subscription is now (or not at all).
 */
import './env.ts';
import { jest } from '@jest/globals';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { invoke, newTenant, type TestTenant } from '../../support/api.ts';
import type { LocalQueues } from '#infra/local/queues.ts';
import { startQueues } from '../../support/queues.ts';
import type { Worker } from '#shared/routes.ts';
import { commit, newEvent } from '#shared/events/outbox.ts';
import { dynamo } from '#shared/store/client.ts';
import { getSubscription } from '#shared/webhooks/subscription-store.ts';
import { currentSubscription, prefetchSubscriptions, SUBSCRIPTION_FRESH_MS } from '#shared/webhooks/current-subscriptions.ts';
import { receiverPool, verifyHex, verifyStandard } from './receiver.ts';

type WorkerHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | void>;

/** Bodies of every message the delivery worker received, exactly as SQS handed them over. */
const deliveryBodies: string[] = [];
/** While set, the delivery worker holds each batch until it resolves (a job queued, not yet run). */
let gate: Promise<void> | undefined;
let arrived: (() => void) | undefined;

let queues: LocalQueues;
const receivers = receiverPool();

beforeAll(async () => {
  queues = await startQueues({
    retryDelayMs: 50,
    concurrency: 4,
    load: async (worker: Worker) => {
      const handler = (await import(`../../../functions/${worker.handler}.ts`)).handler as WorkerHandler;
      if (worker.queue !== 'webhook-deliveries') return handler;
      return async (event: SQSEvent, context: Context) => {
        deliveryBodies.push(...event.Records.map((r) => r.body));
        arrived?.();
        if (gate) await gate;
        return handler(event, context);
      };
    },
  });
});
afterAll(async () => {
  await queues.stop();
  await receivers.closeAll();
});

const receiver = receivers.start;

async function subscribe(t: TestTenant, url: string) {
  const res = await invoke('POST /user-webhooks', { apiKey: t.apiKey, body: { name: 'test', url, events: ['*'] } });
  expect(res.status).toBe(201);
  return res.body.data as { id: string; secret: string };
}

const deliveriesOf = async (t: TestTenant, id: string) =>
  (await invoke('GET /user-webhooks/{id}/deliveries', { apiKey: t.apiKey, params: { id }, query: { limit: '100' } })).body.data as any[];

it('puts no URL and no secret in any delivery message (they would stay 14 days in a dead-letter queue)', async () => {
  // Prepare: two subscriptions (lane followers get jobs of their own) and a receiver that fails twice (retry jobs).
  const t = await newTenant();
  let failures = 2;
  const flaky = await receiver(() => (failures-- > 0 ? { status: 500 } : { status: 200 }));
  const ok = await receiver();
  const a = await subscribe(t, flaky.url);
  const b = await subscribe(t, ok.url);
  const before = deliveryBodies.length;

  // Act
  for (const id of ['x', 'y', 'x']) await commit([], [newEvent(t.businessId, 'contact.updated', { contact_id: id, changed_fields: ['name'] })]);
  // (Generous waits: the first batches also load the worker modules, on a machine shared by many test runs.)
  await flaky.waitFor(5, 60_000);
  await ok.waitFor(3, 60_000);
  await queues.idle(60_000);

  // Assess
  const bodies = deliveryBodies.slice(before).filter((body) => body.includes(t.businessId));
  expect(bodies.length).toBeGreaterThanOrEqual(8);
  for (const body of bodies) {
    for (const secret of [a.secret, b.secret]) expect(body).not.toContain(secret.slice('whsec_'.length));
    for (const url of [flaky.url, ok.url]) expect(body).not.toContain(new URL(url).host);
  }
}, 90_000);

describe('a first attempt queued before the customer changed the subscription', () => {
  afterEach(() => {
    gate = undefined;
    arrived = undefined;
  });

  /** Fans one event out and holds its delivery job in the worker; `change` runs meanwhile, then the job goes on. */
  async function changeWhileQueued(t: TestTenant, change: () => Promise<void>) {
    let open!: () => void;
    gate = new Promise((resolve) => (open = resolve));
    const held = new Promise<void>((resolve) => (arrived = resolve));
    await commit([], [newEvent(t.businessId, 'contact.updated', { contact_id: 'changed-meanwhile', changed_fields: ['name'] })]);
    await held;
    await change();
    open();
    await queues.idle();
  }

  it('goes to the new URL, signed with the current secret, and nothing to the old URL', async () => {
    // Prepare: the worker has just read the subscription (a warm copy in this container).
    const t = await newTenant();
    const old = await receiver();
    const moved = await receiver();
    const s = await subscribe(t, old.url);
    await prefetchSubscriptions([{ businessId: t.businessId, webhookId: s.id }]);
    let secret = s.secret;

    // Act
    await changeWhileQueued(t, async () => {
      expect((await invoke('PATCH /user-webhooks/{id}', { apiKey: t.apiKey, params: { id: s.id }, body: { url: moved.url } })).status).toBe(200);
      const regen = await invoke('POST /user-webhooks/{id}/regenerate-secret', { apiKey: t.apiKey, params: { id: s.id } });
      secret = regen.body.data.secret;
    });

    // Assess
    expect(old.received).toHaveLength(0);
    expect(moved.received).toHaveLength(1);
    const [x] = moved.received;
    expect(verifyHex(x.body, x.headers['x-webhook-signature'], secret)).toBe(true);
    expect(verifyStandard(x, secret)).toBe(true);
    expect(verifyHex(x.body, x.headers['x-webhook-signature'], s.secret)).toBe(false);
  });

  it('is signed with the new secret only, once the secret was regenerated', async () => {
    const t = await newTenant();
    const r = await receiver();
    const s = await subscribe(t, r.url);
    let secret = s.secret;

    await changeWhileQueued(t, async () => {
      secret = (await invoke('POST /user-webhooks/{id}/regenerate-secret', { apiKey: t.apiKey, params: { id: s.id } })).body.data.secret;
    });

    expect(r.received).toHaveLength(1);
    expect(verifyStandard(r.received[0], secret)).toBe(true);
    expect(verifyStandard(r.received[0], s.secret)).toBe(false);
  });

  it.each([
    ['disabled', 'PATCH /user-webhooks/{id}', { enabled: false }, 'subscription_disabled'],
    ['deleted', 'DELETE /user-webhooks/{id}', undefined, null],
  ] as const)('is not sent at all once the subscription is %s', async (_label, route, body, reason) => {
    // Prepare
    const t = await newTenant();
    const r = await receiver();
    const s = await subscribe(t, r.url);
    await prefetchSubscriptions([{ businessId: t.businessId, webhookId: s.id }]);

    // Act
    await changeWhileQueued(t, async () => {
      expect((await invoke(route, { apiKey: t.apiKey, params: { id: s.id }, body })).status).toBe(200);
    });

    // Assess: nothing sent; a disabled subscription keeps the delivery, failed without an attempt.
    expect(r.received).toHaveLength(0);
    if (reason) {
      const [d] = await deliveriesOf(t, s.id);
      expect(d).toMatchObject({ status: 'failed', failureReason: reason, attemptCount: 0 });
    }
  });
});

describe('the worker copy of a subscription', () => {
  // A stopped clock: what is fresh and what is not does not depend on how busy the machine is.
  let clock = 0;
  beforeEach(() => {
    clock = Date.now();
    jest.spyOn(Date, 'now').mockImplementation(() => clock);
  });
  afterEach(() => jest.restoreAllMocks());

  /** The table requests made while `act` runs; `answered` gets a promise of each one's answer. */
  async function requestsDuring(act: () => Promise<unknown>, answered: Promise<unknown>[] = []): Promise<string[]> {
    const seen: string[] = [];
    const name = `count-${Math.random()}`;
    dynamo.middlewareStack.add((next, context) => async (args) => {
      seen.push(context.commandName ?? 'unknown');
      const answer = next(args);
      answered.push(answer.catch(() => undefined));
      return answer;
    }, { step: 'initialize', name });
    try {
      await act();
    } finally {
      dynamo.middlewareStack.remove(name);
    }
    return seen;
  }

  it('is read for a whole batch in one request, and used without another read while it is fresh', async () => {
    // Prepare: three subscriptions of two businesses.
    const [t1, t2] = [await newTenant(), await newTenant()];
    const refs = [
      { businessId: t1.businessId, webhookId: (await subscribe(t1, 'http://127.0.0.1:9/a')).id },
      { businessId: t1.businessId, webhookId: (await subscribe(t1, 'http://127.0.0.1:9/b')).id },
      { businessId: t2.businessId, webhookId: (await subscribe(t2, 'http://127.0.0.1:9/c')).id },
    ];

    // Act
    const batch = await requestsDuring(() => prefetchSubscriptions([...refs, ...refs]));
    const sends = await requestsDuring(() => Promise.all(refs.map((r) => currentSubscription(r))));

    // Assess
    expect(batch).toEqual(['BatchGetItemCommand']);
    expect(sends).toEqual([]);
  });

  it('is read again in the background past half its life, so that the next batches find a fresh copy without waiting', async () => {
    // Prepare
    const t = await newTenant();
    const s = await subscribe(t, 'http://127.0.0.1:9/r');
    const ref = { businessId: t.businessId, webhookId: s.id };
    await prefetchSubscriptions([ref]);

    // Act: past half the copy's life, a batch goes on with it and reads it again meanwhile.
    clock += SUBSCRIPTION_FRESH_MS * 0.6;
    const answered: Promise<unknown>[] = [];
    const batch = await requestsDuring(() => prefetchSubscriptions([ref]), answered);
    await Promise.all(answered);
    await new Promise((resolve) => setImmediate(resolve));
    // Past the first copy's life, within the second's.
    clock += SUBSCRIPTION_FRESH_MS * 0.6;
    const later = await requestsDuring(() => currentSubscription(ref));

    // Assess
    expect(batch).toEqual(['BatchGetItemCommand']);
    expect(later).toEqual([]);
  });

  it('is read once for all the attempts of a moment that find their copy too old', async () => {
    const t = await newTenant();
    const s = await subscribe(t, 'http://127.0.0.1:9/shared');
    const ref = { businessId: t.businessId, webhookId: s.id };
    await prefetchSubscriptions([ref]);
    clock += SUBSCRIPTION_FRESH_MS;

    const reads = await requestsDuring(() => Promise.all(Array.from({ length: 10 }, () => currentSubscription(ref))));

    expect(reads).toEqual(['GetItemCommand']);
  });

  it('is read again when the job names a newer version than the copy, or once the copy is no longer fresh', async () => {
    // Prepare
    const t = await newTenant();
    const s = await subscribe(t, 'http://127.0.0.1:9/v');
    const ref = { businessId: t.businessId, webhookId: s.id };
    await prefetchSubscriptions([ref]);
    const copy = (await currentSubscription(ref))!;
    // A change the fan-out saw (and this container did not).
    const patched = await invoke('PATCH /user-webhooks/{id}', { apiKey: t.apiKey, params: { id: s.id }, body: { name: 'renamed' } });
    expect(patched.status).toBe(200);
    const now = (await getSubscription(t.businessId, s.id))!;
    expect(now.version).toBeGreaterThan(copy.version);

    // Act
    const newer = await requestsDuring(async () => expect((await currentSubscription({ ...ref, subscriptionVersion: now.version }))!.name).toBe('renamed'));
    clock += SUBSCRIPTION_FRESH_MS;
    const stale = await requestsDuring(() => currentSubscription(ref));

    // Assess
    expect(newer).toEqual(['GetItemCommand']);
    expect(stale).toEqual(['GetItemCommand']);
  });
});
