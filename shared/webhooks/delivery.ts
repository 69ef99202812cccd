/**
 * The delivery worker's rules: send one delivery job, record the attempt, decide what comes next.
 *
 * - Only the head of an ordering lane is sent; a delivery behind it waits (re-queued with a delay) and is
 *   woken as soon as the head is done.
 * - A lane head's first attempt comes with its delivery in the job and goes straight out; every other
 *   job, and any job received a second time, takes a lease (conditional write), which keeps duplicate
 *   jobs from sending the same delivery twice at once.
 * - Every attempt is sent with the subscription as it is now (shared/webhooks/current-subscriptions.ts):
 *   never to a URL the customer replaced, with a secret they rotated, or for a subscription that is
 *   disabled, deleted or no longer subscribed to the event; queue messages carry neither URL nor secret.
 * - A delivery checks its lane and the outbox before it is sent: an earlier event of its ordering key
 *   that is still pending (or not yet fanned out) holds it back.
 * - 2xx: delivered. 410: the subscription is disabled. Other statuses, time-outs and network errors are
 *   retried with exponential backoff and jitter, or after `Retry-After`, until the attempts run out.
 *   Delays past SQS's 15-minute maximum are reached by re-queueing with `notBefore`.
 * - A subscription whose failures have lasted `disableAfterSeconds`, or that failed every attempt of a delivery with
 *   nothing delivered meanwhile, is disabled (reason `failing`).
 */
import { webhookDelivery } from '#shared/metrics/metrics.ts';
import { enqueue, enqueueAll } from '#shared/queue/queue.ts';
import { logger } from '#shared/log/logger.ts';
import { safeFetch, SafeFetchError } from '#shared/net/safe-fetch.ts';
import { type Attempt, type Delivery, type DeliveryJob, type Subscription, type SubscriptionTarget, takesDelivery } from './model.ts';
import { createDelivery, type Outcome, recordOutcome, recordOutcomes } from './delivery-store.ts';
import { claimDelivery, releaseDelivery } from './lease-store.ts';
import { joinLane, laneFront, leaveLane } from './lane-store.ts';
import { clearFailing, markFailing, updateSubscription } from './subscription-store.ts';
import { currentSubscription } from './current-subscriptions.ts';
import { deliveryJob } from './fanout.ts';
import { clearEventOutbox, hasEarlierOutboxEvent } from './outbox-store.ts';
import { nextDelaySeconds } from './retry.ts';
import { serializePayload, signedHeaders } from './signing.ts';
import { webhookSettings } from './settings.ts';

const SQS_MAX_DELAY_SECONDS = 900;
/** Jobs arriving this early count as on time (clock and delay rounding). */
const EARLY_TOLERANCE_MS = 1000;
/** Past this, a lane head that is still pending is assumed to have lost its job. */
const HEAD_OVERDUE_MS = 2 * (webhookSettings.timeoutMs + 5_000) + 60_000;
/** Past this, a batch of first attempts has surely finished or died (its jobs then come back through the lease). */
const BATCH_OVERDUE_MS = HEAD_OVERDUE_MS;

export interface SendResult {
  attempt: Attempt;
  ok: boolean;
  retryAfter?: string;
  /** The target can never be reached as configured (blocked address, invalid URL): no retry helps. */
  permanent: boolean;
}

/** One signed POST of a delivery to a subscription's URL, through the SSRF-safe client, no redirects. */
export async function send(d: Pick<Delivery, 'id' | 'event' | 'data'>, s: SubscriptionTarget, attemptNo: number): Promise<SendResult> {
  const body = serializePayload(d.event, d.data);
  const at = new Date();
  const headers = signedHeaders({ deliveryId: d.id, event: d.event, body, secret: s.secret, at });
  const started = performance.now();
  const attempt = (statusCode: number | null, error: string | null): Attempt => ({
    attempt: attemptNo,
    at: at.toISOString(),
    statusCode,
    durationMs: Math.round(performance.now() - started),
    error,
  });
  try {
    const res = await safeFetch(s.url, { method: 'POST', headers, body, timeoutMs: webhookSettings.timeoutMs, followRedirects: 0, discardBody: true });
    const ok = res.status >= 200 && res.status < 300;
    webhookDelivery(ok ? 'delivered' : 'failed', d.event);
    const error = ok ? null : res.status >= 300 && res.status < 400 ? `redirect not followed (HTTP ${res.status})` : `HTTP ${res.status}`;
    return { attempt: attempt(res.status, error), ok, retryAfter: res.headers['retry-after'], permanent: false };
  } catch (err) {
    webhookDelivery('failed', d.event);
    const code = err instanceof SafeFetchError ? err.code : 'network_error';
    const permanent = code === 'blocked_address' || code === 'invalid_url';
    return { attempt: attempt(null, `${code}: ${(err as Error).message}`), ok: false, permanent };
  }
}

const enqueueJob = (job: DeliveryJob, delaySeconds = 0) =>
  enqueue('webhook-deliveries', job, { delaySeconds: Math.min(SQS_MAX_DELAY_SECONDS, Math.max(0, delaySeconds)) });

/** Wakes the delivery waiting behind a finished one, when there is one. */
async function wake(d: Pick<Delivery, 'businessId' | 'webhookId'>, next: string | null | undefined): Promise<void> {
  if (next) await enqueueJob({ businessId: d.businessId, webhookId: d.webhookId, deliveryId: next });
}

async function disable(s: Subscription, reason: 'gone' | 'failing'): Promise<void> {
  const now = new Date().toISOString();
  await updateSubscription(s.businessId, s.id, { enabled: false, disabledReason: reason, disabledAt: now, updatedAt: now });
  // Reported: an error log line (alarmed on in AWS) and the subscription's own state in GET /user-webhooks/{id}.
  logger.error('webhook subscription disabled', { businessId: s.businessId, webhookId: s.id, reason, failingSince: s.failingSince });
}

/**
 * Runs one job that is not a first attempt carrying its delivery (or that was received before): it
 * claims the delivery (a lease), and a delivery with a lane checks that it heads it.
 */
export async function processDeliveryJob(job: DeliveryJob): Promise<void> {
  const now = Date.now();
  if (job.notBefore && job.notBefore - now > EARLY_TOLERANCE_MS) {
    await enqueueJob(job, (job.notBefore - now) / 1000);
    return;
  }

  const due = new Date(now + EARLY_TOLERANCE_MS).toISOString();
  let claim = await claimDelivery(job, webhookSettings.timeoutMs + 5_000, job.attempt, due);
  if (!claim.claimed && !claim.delivery && job.delivery) {
    // A first attempt that carried its delivery and did not finish (the worker died): its record was
    // never written, so write it now and go on as with any other job.
    await createDelivery(job.delivery);
    claim = await claimDelivery(job, webhookSettings.timeoutMs + 5_000, job.attempt, due);
  }
  if (!claim.claimed && !claim.delivery && job.attempt !== undefined && job.notBefore !== undefined) {
    // A scheduled retry of a first attempt whose batch has not recorded it yet (a slower delivery of the same batch
    // holds the batch's one write): it comes back shortly, for as long as that batch may still be running.
    if (now - job.notBefore < BATCH_OVERDUE_MS) await enqueueJob(job, webhookSettings.laneWaitSeconds);
    else logger.warn('webhook retry dropped: its delivery was never recorded', { businessId: job.businessId, webhookId: job.webhookId, deliveryId: job.deliveryId });
    return;
  }
  if (!claim.claimed) {
    const d = claim.delivery;
    // Not pending (done), taken by another job, or an unscheduled job before the scheduled retry: nothing to do.
    // A scheduled retry that arrived before its previous attempt was recorded comes back shortly.
    if (d && d.status === 'pending' && job.attempt !== undefined && d.attemptCount + 1 < job.attempt) {
      const leaseLeft = (d.leaseUntil ?? 0) - now;
      await enqueueJob(leaseLeft > 0 ? job : { ...job, attempt: d.attemptCount + 1 }, leaseLeft > 0 ? Math.min(5, leaseLeft / 1000) : 0);
    }
    // A finished delivery still in its lane (a crash between its record and leaving the lane): clear
    // the lane item and wake the follower, so the lane never stalls behind it.
    if (d && d.status !== 'pending' && d.laneKey && d.laneSk) {
      await leaveLane(d);
      await wake(d, d.nextInLane);
    }
    return;
  }
  const d = claim.delivery;

  let successor: string | null = null;
  if (d.laneKey && d.laneSk) {
    // The outbox first, then the lane: an earlier event hands over from its outbox item to its lane item
    // (the lane item is written before the outbox item goes), so reading in this order never misses both.
    const earlierInOutbox = await hasEarlierOutboxEvent(d.businessId, d.laneKey, d.laneSk);
    const [head, next] = earlierInOutbox ? [] : await laneFront(d.businessId, d.webhookId, d.laneKey);
    const behind = head && head.deliveryId !== d.id ? head : undefined;
    if (behind || earlierInOutbox) {
      // Waiting behind an earlier event of the same ordering key: look again when the head is due
      // (an earlier event still in the outbox gets its deliveries shortly, or from the sweep).
      await releaseDelivery(d);
      const headDue = behind ? Date.parse(behind.nextAttemptAt) - now : 0;
      // A head long overdue lost its job somewhere (a crash between two steps): wake it; its lease stops doubles.
      if (behind && headDue < -HEAD_OVERDUE_MS) await enqueueJob({ businessId: d.businessId, webhookId: d.webhookId, deliveryId: behind.deliveryId });
      await enqueueJob({ ...job, attempt: undefined }, Math.max(webhookSettings.laneWaitSeconds, headDue / 1000 + webhookSettings.laneWaitSeconds));
      return;
    }
    successor = next?.deliveryId ?? null;
  }
  const { outcome, after } = await attemptDelivery(d, job.subscriptionVersion, now);
  const recorded = await recordOutcome(d, outcome);
  if (job.clearsOutbox) {
    // A lone delivery (its first attempt's worker died): its event's outbox item held the lane until now.
    if (outcome.status === 'pending') await joinLane(recorded);
    await clearEventOutbox(d);
  }
  if (outcome.status !== 'pending') await wake(d, successor ?? recorded.nextInLane);
  await after?.();
}

/** A job the fan-out queued with its delivery (received for the first time: the worker checks that). */
export const isFirstAttempt = (job: DeliveryJob): boolean => job.delivery !== undefined && job.attempt === undefined && !job.notBefore;

/**
 * How long finished first attempts of a batch wait for the rest before they are recorded without them: one slow
 * receiver (up to the 10 s time-out) must not hold the other subscriptions' acknowledged deliveries pending, nor the
 * later events of their lanes, while a batch whose sends end together still makes one write.
 */
const STRAGGLER_WAIT_MS = 250;

type FirstOutcome = { d: Delivery; clearsOutbox?: boolean } & Attempted;

/** Records finished first attempts together: at once when none of the batch is still sending, else after the straggler wait. */
function outcomeGroups(sending: number, record: (group: FirstOutcome[]) => Promise<void>) {
  let waiting: { result: FirstOutcome; done: (err?: unknown) => void }[] = [];
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    const group = waiting;
    waiting = [];
    if (group.length > 0) record(group.map((g) => g.result)).then(() => group.forEach((g) => g.done()), (err) => group.forEach((g) => g.done(err ?? new Error('record failed'))));
  };
  const settled = () => {
    sending--;
    if (sending === 0) flush();
    else if (waiting.length > 0) timer ??= setTimeout(flush, STRAGGLER_WAIT_MS);
  };
  return {
    /** Resolves once the result is recorded. */
    add: (result: FirstOutcome) => new Promise<void>((resolve, reject) => {
      waiting.push({ result, done: (err) => (err ? reject(err) : resolve()) });
      settled();
    }),
    /** An attempt that ended without a result (its error is the caller's). */
    skip: settled,
  };
}

/**
 * Runs the first attempts that the fan-out queued with their deliveries (lane heads, or deliveries
 * without a lane): no read of the delivery and no lease before the send, and the outcomes recorded
 * together in batched writes (each record replaces the delivery, and a finished one leaves its lane in
 * the same request), in groups of those that finished together (outcomeGroups). A follower the fan-out
 * named after the job was queued may then wait the lane wait once more before it goes; order is never
 * at stake, the follower checks its lane itself.
 */
export async function processFirstAttempts(jobs: DeliveryJob[]): Promise<void> {
  const now = Date.now();
  const groups = outcomeGroups(jobs.length, async (results) => {
    await recordOutcomes(results.map(({ d, outcome, clearsOutbox }) => ({ delivery: d, outcome, clearsOutbox })));
    // The followers of the finished ones, woken together (ten to a SendMessageBatch).
    const followers = results.filter(({ d, outcome }) => outcome.status !== 'pending' && d.nextInLane);
    await Promise.all([
      enqueueAll('webhook-deliveries', followers.map(({ d }) => ({ message: { businessId: d.businessId, webhookId: d.webhookId, deliveryId: d.nextInLane! } satisfies DeliveryJob }))),
      ...results.map(({ after }) => after?.()),
    ]);
  });
  const settled = await Promise.allSettled(jobs.map(async ({ delivery, clearsOutbox, subscriptionVersion }) => {
    const d = delivery!;
    let attempted: Attempted;
    try {
      attempted = await attemptDelivery(d, subscriptionVersion, now);
    } catch (err) {
      groups.skip();
      throw err;
    }
    await groups.add({ d, clearsOutbox, ...attempted });
  }));
  // Every group written or failed before the worker answers (a failure sends the batch's first attempts back through the lease).
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}

interface Attempted {
  outcome: Outcome;
  /** What follows once the outcome is recorded. */
  after?: () => Promise<void>;
}

/**
 * Sends one attempt of `d` with its subscription as it is now, and decides what comes of it. What must
 * precede the record happens here (a retry's job is queued before the record: a crash in between leaves
 * a job, at worst one attempt too many, never none; a subscription is disabled or marked failing).
 */
async function attemptDelivery(d: Delivery, subscriptionVersion: number | undefined, now: number): Promise<Attempted> {
  const failed = (reason: string, attempt?: Attempt): Attempted => ({ outcome: { status: 'failed', attempt, failureReason: reason } });
  const s = await currentSubscription({ businessId: d.businessId, webhookId: d.webhookId, subscriptionVersion });
  if (!s) return failed('subscription_deleted');
  if (!s.enabled) return failed('subscription_disabled');
  if (!takesDelivery(s, d.event)) return failed('event_unsubscribed');

  const attemptNo = d.attemptCount + 1;
  const result = await send(d, s, attemptNo);
  const failedInRun = attemptNo - (d.runStart ?? 0);

  if (result.ok) {
    return { outcome: { status: 'delivered', attempt: result.attempt }, after: s.failingSince ? () => clearFailing(s.businessId, s.id) : undefined };
  }
  if (result.attempt.statusCode === 410) {
    await disable(s, 'gone');
    return failed('gone', result.attempt);
  }
  if (!s.failingSince) await markFailing(s.businessId, s.id, result.attempt.at);
  if (s.failingSince && now - Date.parse(s.failingSince) >= webhookSettings.disableAfterSeconds * 1000) {
    await disable(s, 'failing');
    return failed('subscription_failing', result.attempt);
  }
  if (result.permanent) return failed(result.attempt.error?.split(':')[0] ?? 'unreachable', result.attempt);
  if (failedInRun >= webhookSettings.maxAttempts) {
    // Every attempt of this delivery's series failed, and nothing reached the receiver since the series began (a 2xx
    // clears failingSince): it has failed for the whole schedule (about 3 days deployed), a lasting failure. Without
    // this a receiver that stays down is disabled only by an event after the limit, which then gets one attempt.
    const seriesBegan = d.attempts[d.runStart ?? 0]?.at ?? result.attempt.at;
    if (s.failingSince && s.failingSince <= seriesBegan) await disable(s, 'failing');
    return failed('max_attempts', result.attempt);
  }

  const delay = nextDelaySeconds(failedInRun, result.retryAfter);
  const nextAt = Date.now() + delay * 1000;
  await enqueueJob({ ...deliveryJob(d, nextAt), attempt: attemptNo + 1 }, delay);
  return { outcome: { status: 'pending', attempt: result.attempt, nextAttemptAt: new Date(nextAt).toISOString() } };
}
