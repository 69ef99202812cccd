/**
 * The delivery worker's rules: send one delivery job, record the attempt, decide what comes next.
 *
 * - Only the head of an ordering lane is sent; a delivery behind it waits (re-queued with a delay) and is
 *   nudged as soon as the head is done.
 * - A lease (conditional write) keeps duplicate jobs from sending the same delivery twice at once.
 * - 2xx: delivered. 410: the subscription is disabled. Other statuses, time-outs and network errors are
 *   retried with exponential backoff and jitter, or after `Retry-After`, until the attempts run out.
 *   Delays past SQS's 15-minute maximum are reached by re-queueing with `notBefore`.
 * - A subscription whose failures have lasted `disableAfterSeconds` is disabled (reason `failing`).
 */
import { webhookDelivery } from '#shared/metrics/metrics.ts';
import { enqueue } from '#shared/queue/queue.ts';
import { logger } from '#shared/log/logger.ts';
import { safeFetch, SafeFetchError } from '#shared/net/safe-fetch.ts';
import type { Attempt, Delivery, DeliveryJob, Subscription } from './model.ts';
import { claimDelivery, clearFailing, getSubscription, laneFront, markFailing, recordOutcome, releaseDelivery, updateSubscription } from './repository.ts';
import { deliveryJob } from './fanout.ts';
import { nextDelaySeconds } from './retry.ts';
import { serializePayload, signedHeaders } from './signing.ts';
import { webhookSettings } from './settings.ts';

const SQS_MAX_DELAY_SECONDS = 900;
/** Jobs arriving this early count as on time (clock and delay rounding). */
const EARLY_TOLERANCE_MS = 1000;
/** Past this, a lane head that is still pending is assumed to have lost its job. */
const HEAD_OVERDUE_MS = 2 * (webhookSettings.timeoutMs + 5_000) + 60_000;

export interface SendResult {
  attempt: Attempt;
  ok: boolean;
  retryAfter?: string;
  /** The target can never be reached as configured (blocked address, invalid URL): no retry helps. */
  permanent: boolean;
}

/** One signed POST of a delivery to a subscription's URL, through the SSRF-safe client, no redirects. */
export async function send(d: Pick<Delivery, 'id' | 'event' | 'data'>, s: Pick<Subscription, 'url' | 'secret'>, attemptNo: number): Promise<SendResult> {
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
    const res = await safeFetch(s.url, { method: 'POST', headers, body, timeoutMs: webhookSettings.timeoutMs, followRedirects: 0, maxBytes: 1024 * 1024 });
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

/** Wakes the delivery waiting behind `d` in its lane (known from the lane check, or looked up). */
async function nudgeLane(d: Delivery, successor?: string | null): Promise<void> {
  if (!d.laneKey) return;
  let next = successor;
  if (next === undefined) next = (await laneFront(d.businessId, d.webhookId, d.laneKey)).find((e) => e.deliveryId !== d.id)?.deliveryId ?? null;
  if (next) await enqueueJob({ businessId: d.businessId, webhookId: d.webhookId, deliveryId: next });
}

async function giveUp(d: Delivery, reason: string, attempt?: Attempt, successor?: string | null): Promise<void> {
  await recordOutcome(d, { status: 'failed', attempt, failureReason: reason });
  await nudgeLane(d, successor);
}

async function disable(s: Subscription, reason: 'gone' | 'failing'): Promise<void> {
  const now = new Date().toISOString();
  await updateSubscription(s.businessId, s.id, { enabled: false, disabledReason: reason, disabledAt: now, updatedAt: now });
  // Reported: an error log line (alarmed on in AWS) and the subscription's own state in GET /user-webhooks/{id}.
  logger.error('webhook subscription disabled', { businessId: s.businessId, webhookId: s.id, reason, failingSince: s.failingSince });
}

/**
 * Runs one job. `subscriptions` holds the batch's subscriptions read in one round trip (a missing entry
 * means the subscription was deleted); without it the subscription is read here.
 */
export async function processDeliveryJob(job: DeliveryJob, subscriptions?: Map<string, Subscription>): Promise<void> {
  const now = Date.now();
  if (job.notBefore && job.notBefore - now > EARLY_TOLERANCE_MS) {
    await enqueueJob(job, (job.notBefore - now) / 1000);
    return;
  }

  const claim = await claimDelivery(job, webhookSettings.timeoutMs + 5_000, job.attempt, new Date(now + EARLY_TOLERANCE_MS).toISOString());
  if (!claim.claimed) {
    const d = claim.delivery;
    // Not pending (done), taken by another job, or an unscheduled job before the scheduled retry: nothing to do.
    // A scheduled retry that arrived before its previous attempt was recorded comes back shortly.
    if (d && d.status === 'pending' && job.attempt !== undefined && d.attemptCount + 1 < job.attempt) {
      const leaseLeft = (d.leaseUntil ?? 0) - now;
      await enqueueJob(leaseLeft > 0 ? job : { ...job, attempt: d.attemptCount + 1 }, leaseLeft > 0 ? Math.min(5, leaseLeft / 1000) : 0);
    }
    return;
  }
  const d = claim.delivery;

  const s = subscriptions ? subscriptions.get(`${d.businessId}/${d.webhookId}`) : await getSubscription(d.businessId, d.webhookId);
  if (!s) return giveUp(d, 'subscription_deleted');
  if (!s.enabled) return giveUp(d, 'subscription_disabled');

  let successor: string | null = null;
  if (d.laneKey) {
    const [head, next] = await laneFront(d.businessId, d.webhookId, d.laneKey);
    if (head && head.deliveryId !== d.id) {
      // Waiting behind an earlier event of the same ordering key: look again when the head is due.
      await releaseDelivery(d);
      const headDue = Date.parse(head.nextAttemptAt) - now;
      // A head long overdue lost its job somewhere (a crash between two steps): wake it; its lease stops doubles.
      if (headDue < -HEAD_OVERDUE_MS) await enqueueJob({ businessId: d.businessId, webhookId: d.webhookId, deliveryId: head.deliveryId });
      await enqueueJob({ ...job, attempt: undefined }, Math.max(webhookSettings.laneWaitSeconds, headDue / 1000 + webhookSettings.laneWaitSeconds));
      return;
    }
    successor = next?.deliveryId ?? null;
  }

  const attemptNo = d.attemptCount + 1;
  const result = await send(d, s, attemptNo);
  const failedInRun = attemptNo - (d.runStart ?? 0);

  if (result.ok) {
    await recordOutcome(d, { status: 'delivered', attempt: result.attempt });
    if (s.failingSince) await clearFailing(s.businessId, s.id);
    await nudgeLane(d, successor);
    return;
  }
  if (result.attempt.statusCode === 410) {
    await disable(s, 'gone');
    return giveUp(d, 'gone', result.attempt, successor);
  }
  if (!s.failingSince) await markFailing(s.businessId, s.id, result.attempt.at);
  if (s.failingSince && now - Date.parse(s.failingSince) >= webhookSettings.disableAfterSeconds * 1000) {
    await disable(s, 'failing');
    return giveUp(d, 'subscription_failing', result.attempt, successor);
  }
  if (result.permanent) return giveUp(d, result.attempt.error?.split(':')[0] ?? 'unreachable', result.attempt, successor);
  if (failedInRun >= webhookSettings.maxAttempts) return giveUp(d, 'max_attempts', result.attempt, successor);

  const delay = nextDelaySeconds(failedInRun, result.retryAfter);
  const nextAt = Date.now() + delay * 1000;
  // Queued before the record: a crash in between leaves a job (at worst one attempt too many), never none.
  await enqueueJob({ ...deliveryJob(d, nextAt), attempt: attemptNo + 1 }, delay);
  await recordOutcome(d, { status: 'pending', attempt: result.attempt, nextAttemptAt: new Date(nextAt).toISOString() });
}
