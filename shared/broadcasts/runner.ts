/**
 * The broadcast worker's logic.
 *
 * start: a scheduled broadcast becomes running; the audience is frozen into recipient items (a dynamic segment
 *   evaluated once); `broadcast.sent` is committed with the frozen counts; the first run is enqueued.
 * run: paces the sends for up to `loopMs`, one step per second, then hands over to a new queue message (the
 *   queue carries the broadcast across worker restarts). Each step reserves this second's share of the business
 *   budget, claims that many recipients (pending → sending, conditional), sends, and records each outcome under
 *   its claim. A recipient is never claimed twice, so nobody is sent twice even when a worker dies or a message
 *   is delivered twice; a claim whose worker died is resolved after the lease as `failed` (`outcome_unknown`)
 *   rather than risk a second message.
 *   When nothing is left it tallies the recipients and commits `completed` with `broadcast.completed`; an error that
 *   no recipient can get past (template rejected, account not configured) commits `failed` with `broadcast.failed`.
 *   A cancelled or failed broadcast's run marks what has not gone out as `cancelled`.
 */
import { randomUUID } from 'node:crypto';
import { ApiError } from '#shared/http/errors.ts';
import { commit } from '#shared/events/outbox.ts';
import { enqueue } from '#shared/queue/queue.ts';
import { getBusiness } from '#shared/business/repository.ts';
import { logger } from '#shared/log/logger.ts';
import { isConditionFailure as isSingleConditionFailure } from '#shared/store/conditional.ts';
import { cancelledByCondition } from '#shared/store/transact.ts';
import {
  addCounts, claimRecipient, getBroadcast, putRecipients, queueHead, settleRecipient, tallyRecipients, talliedCounts, transition,
  transitionInput, updateUsageStatus, type Outcome,
} from './repository.ts';
import { AudienceUnavailable, freezeAudience } from './audience.ts';
import { releaseBroadcast, reserveForBroadcast, secondShare } from './budget.ts';
import { broadcastCompleted, broadcastFailed, broadcastSent } from './events.ts';
import { scheduleStart } from './scheduler.ts';
import { sendTemplate } from './sender.ts';
import { broadcastSettings } from './settings.ts';
import type { Broadcast, BroadcastError, Counts, Recipient } from './model.ts';
import type { BroadcastMessage } from './messages.ts';

/**
 * Test instrumentation: `afterSend` runs after a message went out and before its outcome is recorded; a throw
 * there is a worker dying at the worst moment.
 */
export const faults: { afterSend?: (r: Recipient) => void } = {};

/** Upstream codes no recipient gets past: the template or the account is the problem. */
const FATAL_CODES = new Set(['132000', '132001', '132005', '132007', '132012', '132015', '132016', '131042', '131031', '190', '200', '10']);
const FATAL_ERRORS = new Set(['template_not_found', 'invalid_template_parameters', 'account_not_configured', 'messaging_not_configured', 'media_permission_denied']);
/** Throughput limits: the recipient goes back to the queue and the step ends. */
const THROTTLE_CODES = new Set(['130429', '131056', '80007', '4']);

const EARLY_START_TOLERANCE_MS = 1500;
const SWEEP_PAGE = 100;

/** A single write's or a transaction's condition did not hold: someone else changed the broadcast first. */
const isConditionFailure = (err: unknown) => isSingleConditionFailure(err) || cancelledByCondition(err);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A few milliseconds past the next second boundary, when the next second's share opens. */
const untilNextSecond = () => 1000 - (Date.now() % 1000) + 5;

export async function enqueueRun(businessId: string, broadcastId: string, delayMs = 0): Promise<void> {
  await enqueue('broadcasts', { type: 'run', businessId, broadcastId } satisfies BroadcastMessage, { delaySeconds: delayMs / 1000 });
}

export async function handleBroadcastMessage(msg: BroadcastMessage, receiveCount = 1): Promise<void> {
  if (msg.type === 'start') await start(msg.businessId, msg.broadcastId, receiveCount);
  else await run(msg.businessId, msg.broadcastId);
}

// ---- start -------------------------------------------------------------------------------------------------

async function start(businessId: string, id: string, receiveCount: number): Promise<void> {
  let b = await getBroadcast(businessId, id);
  if (!b) return;
  if (b.status === 'scheduled') {
    const early = b.send_at ? Date.parse(b.send_at) - Date.now() : 0;
    if (early > EARLY_START_TOLERANCE_MS) {
      // Fired early: wait on the queue (up to its 15-minute delay), or schedule again.
      if (early <= 900_000) await enqueue('broadcasts', { type: 'start', businessId, broadcastId: id } satisfies BroadcastMessage, { delaySeconds: Math.ceil(early / 1000) });
      else await scheduleStart(businessId, id, new Date(b.send_at!));
      return;
    }
    b = await transition(businessId, id, ['scheduled'], 'running');
    if (!b) return; // cancelled meanwhile
    await updateUsageStatus(b, 'running');
  } else if (b.status !== 'running') {
    return;
  } else if (b.started_at) {
    // A retried start after the audience was frozen: make sure a run exists (a duplicate one is harmless).
    if (receiveCount > 1) await enqueueRun(businessId, id);
    return;
  }
  await freeze(b, receiveCount);
}

/** One start at a time freezes the audience (a duplicate start must not rewrite recipients being sent to). */
const FREEZE_LEASE_MS = 90_000;

async function freeze(b: Broadcast, receiveCount: number): Promise<void> {
  const token = randomUUID();
  const claimed = await transition(
    b.businessId, b.id, ['running'], 'running', { freeze_token: token, freeze_until: Date.now() + FREEZE_LEASE_MS },
    'attribute_not_exists(started_at) AND (attribute_not_exists(freeze_until) OR freeze_until < :now)', { ':now': Date.now() },
  );
  if (!claimed) {
    const current = await getBroadcast(b.businessId, b.id);
    // A retry whose freeze is still held (by a worker that may have died): let the queue bring it back later.
    if (current?.status === 'running' && !current.started_at && receiveCount > 1) throw new Error('the audience is being frozen by another start; retrying later');
    return;
  }
  const business = await getBusiness(b.businessId);
  if (!business?.phoneNumberId) {
    await failBroadcast(b, { error: 'account_not_configured', message: 'The messaging account of this business is not configured' });
    return;
  }
  let recipients;
  try {
    recipients = await freezeAudience(b);
  } catch (err) {
    if (!(err instanceof AudienceUnavailable)) throw err;
    await failBroadcast(b, { error: err.error, message: err.message });
    return;
  }
  await putRecipients(b.businessId, b.id, recipients);
  const counts: Counts = { total: recipients.length, sent: 0, delivered: 0, read: 0, failed: 0, skipped: recipients.filter((r) => r.state === 'skipped').length, cancelled: 0 };
  const startedAt = new Date().toISOString();
  try {
    await commit(
      [{ Update: transitionInput(b.businessId, b.id, ['running'], 'running', { started_at: startedAt, c_total: counts.total, c_skipped: counts.skipped }, 'attribute_not_exists(started_at) AND freeze_token = :token', { ':token': token }) }],
      [broadcastSent(b, counts, startedAt)],
    );
  } catch (err) {
    // Cancelled while freezing, or frozen by a concurrent start: the run below sweeps or carries on.
    if (!isConditionFailure(err)) throw err;
  }
  await enqueueRun(b.businessId, b.id);
}

/** Commits `failed` (with `broadcast.failed`) for a running broadcast; a run that had started marks what has not gone out. */
export async function failBroadcast(b: Broadcast, error: BroadcastError): Promise<void> {
  const failedAt = new Date().toISOString();
  const current = (await getBroadcast(b.businessId, b.id)) ?? b;
  try {
    await commit(
      [{ Update: transitionInput(b.businessId, b.id, ['running'], 'failed', { failed_at: failedAt, error }) }],
      [broadcastFailed(current, error, current.counts, failedAt)],
    );
  } catch (err) {
    if (!isConditionFailure(err)) throw err;
    return;
  }
  logger.warn('broadcast failed', { broadcastId: b.id, error });
  await updateUsageStatus(b, 'failed');
  if (current.started_at) await enqueueRun(b.businessId, b.id);
}

// ---- run ---------------------------------------------------------------------------------------------------

async function run(businessId: string, id: string): Promise<void> {
  const deadline = Date.now() + broadcastSettings.loopMs;
  let pipe: Pipeline | undefined;
  let next: number | undefined; // delay of the next run, when this one hands over
  try {
    for (;;) {
      if (pipe?.crash) break;
      const b = await getBroadcast(businessId, id);
      if (!b) return;
      pipe ??= new Pipeline(b, broadcastSettings.sendConcurrency);
      if (b.status === 'cancelled' || b.status === 'failed') {
        await pipe.drain();
        const left = await sweep(b);
        if (left === 'more') continue;
        if (left === 'wait') next = broadcastSettings.leaseMs / 4;
        return;
      }
      if (b.status !== 'running') return;
      if (!b.started_at) {
        next = 1000; // the start step is still freezing the audience
        return;
      }
      if (pipe.fatal) {
        await pipe.drain();
        await failBroadcast(b, pipe.fatal);
        pipe.fatal = undefined;
        return;
      }
      if (await step(b, pipe)) return;
      if (Date.now() + untilNextSecond() >= deadline) {
        next = untilNextSecond();
        return;
      }
      await sleep(untilNextSecond());
    }
  } finally {
    await pipe?.drain();
    if (pipe?.crash) throw pipe.crash;
    // A send that finished after the last look found the template or the account rejected.
    if (pipe?.fatal) {
      await failBroadcast(pipe.b, pipe.fatal);
      next = undefined;
    }
    if (next !== undefined) await enqueueRun(businessId, id, next);
  }
}

/**
 * Sends in flight for one run. Sends are launched at the start of their second and not waited for, so the pace
 * does not depend on upstream latency; at most `capacity` are in flight, and a second whose sends cannot all
 * start at once reserves only what can, so sends never pile up behind the pace.
 */
class Pipeline {
  inFlight = 0;
  fatal: BroadcastError | undefined;
  crash: unknown;
  throttled = false;
  private sent = 0;
  private failed = 0;
  private readonly running = new Set<Promise<void>>();

  constructor(readonly b: Broadcast, readonly capacity: number) {}

  /** Contacts this run is sending to right now (their claims are not abandoned, however long they take). */
  readonly mine = new Set<string>();

  launch(r: Recipient, lease: string): void {
    this.inFlight++;
    this.mine.add(r.contact_id);
    const p: Promise<void> = this.sendOne(r, lease)
      .catch((err) => {
        this.crash ??= err;
      })
      .finally(() => {
        this.inFlight--;
        this.mine.delete(r.contact_id);
        this.running.delete(p);
      });
    this.running.add(p);
  }

  async flushCounts(): Promise<void> {
    const delta = { sent: this.sent, failed: this.failed };
    this.sent = 0;
    this.failed = 0;
    await addCounts(this.b.businessId, this.b.id, delta, { untilTallied: true });
  }

  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
    await this.flushCounts();
  }

  countFailed(n: number): void {
    this.failed += n;
  }

  private async sendOne(r: Recipient, lease: string): Promise<void> {
    const { businessId, id } = this.b;
    if (this.fatal || this.crash) {
      await settleRecipient(businessId, id, r.contact_id, { state: 'pending' }, lease);
      return;
    }
    let outcome: Outcome;
    try {
      const res = await sendTemplate(businessId, id, r.contact_id, r.request ?? {});
      faults.afterSend?.(r);
      outcome = { state: 'sent', message_id: res.messageId, wamid: res.wamid };
    } catch (err) {
      if (err instanceof SimulatedCrash) throw err;
      const classified = classify(err);
      if (classified.kind === 'throttled') {
        this.throttled = true;
        await settleRecipient(businessId, id, r.contact_id, { state: 'pending' }, lease);
        return;
      }
      if (classified.kind === 'fatal') this.fatal ??= classified.error;
      outcome = { state: 'failed', message_id: classified.messageId, error: classified.error };
    }
    if (await settleRecipient(businessId, id, r.contact_id, outcome, lease)) {
      if (outcome.state === 'sent') this.sent++;
      else this.failed++;
    }
  }
}

const OUTCOME_UNKNOWN: BroadcastError = {
  error: 'outcome_unknown',
  code: 'outcome_unknown',
  message: 'The worker sending this message stopped before its outcome was known; it is not sent again',
};

/** Resolves a claim whose worker died, without sending (cancelled or failed broadcasts). */
async function resolveAbandoned(b: Broadcast, r: Recipient): Promise<boolean> {
  return settleRecipient(b.businessId, b.id, r.contact_id, { state: 'failed', message_id: null, error: OUTCOME_UNKNOWN }, r.lease);
}

/** Launches this second's sends. Returns true when the broadcast is over (completed). */
async function step(b: Broadcast, pipe: Pipeline): Promise<boolean> {
  await pipe.flushCounts();
  if (pipe.throttled) {
    // The upstream asked to slow down: skip this second.
    pipe.throttled = false;
    return false;
  }
  const now = Date.now();
  const share = secondShare(b.pace_per_minute || broadcastSettings.pacePerMinute, Math.floor(now / 1000));
  const room = Math.min(share, pipe.capacity - pipe.inFlight);
  // The head also holds this run's own claims still in flight.
  const head = await queueHead(b.businessId, b.id, pipe.inFlight + Math.max(room, 1) + 25);
  if (head.length === 0 && pipe.inFlight === 0) return pipe.fatal ? false : complete(b);
  if (room <= 0) return false;

  // Claims whose worker died go first: resent under the same idempotency key, they get their first outcome back.
  const candidates = [
    ...head.filter((r) => r.state === 'sending' && (r.lease_until ?? 0) < now && !pipe.mine.has(r.contact_id)),
    ...head.filter((r) => r.state === 'pending'),
  ].slice(0, room);
  if (candidates.length === 0) return false;

  const reservation = await reserveForBroadcast(b.businessId, candidates.length, now);
  const lease = randomUUID();
  const claims = await Promise.all(candidates.slice(0, reservation.count).map((r) =>
    claimRecipient(b.businessId, b.id, r.contact_id, lease, now + broadcastSettings.leaseMs, r.state === 'sending' ? r.lease : undefined)));
  const claimed = claims.filter((r): r is Recipient => r !== undefined);
  await releaseBroadcast(b.businessId, reservation, reservation.count - claimed.length);
  for (const r of claimed) pipe.launch(r, lease);
  return false;
}

/** Thrown by test instrumentation to stand for a worker that dies. */
export class SimulatedCrash extends Error {}

type Classified =
  | { kind: 'fatal' | 'recipient'; error: BroadcastError; messageId: string | null }
  | { kind: 'throttled' };

function classify(err: unknown): Classified {
  if (err instanceof ApiError) {
    const body = err.body as Record<string, any>;
    const code = body.code === undefined || body.code === null ? undefined : String(body.code);
    const name = String(body.error ?? 'send_failed');
    if (err.status === 429 || (code && THROTTLE_CODES.has(code))) return { kind: 'throttled' };
    // The first attempt of a worker that died is still marked in progress: it may have gone out.
    if (name === 'idempotency_in_progress') return { kind: 'recipient', messageId: null, error: OUTCOME_UNKNOWN };
    const error: BroadcastError = { error: name, ...(code ? { code } : {}), message: String(body.message ?? name) };
    const messageId = typeof body.data?.id === 'string' ? body.data.id : null;
    const fatal = (code && FATAL_CODES.has(code)) || FATAL_ERRORS.has(name.toLowerCase()) || code === 'MEDIA_PERMISSION_DENIED';
    return { kind: fatal ? 'fatal' : 'recipient', error, messageId };
  }
  logger.error('broadcast send failed unexpectedly', { error: err as Error });
  return { kind: 'recipient', messageId: null, error: { error: 'send_error', code: 'send_error', message: 'The message could not be sent' } };
}

/** Nothing left in the queue: tally every recipient and complete (exact counts, `broadcast.completed`). */
async function complete(b: Broadcast): Promise<boolean> {
  const { counts, open } = await tallyRecipients(b.businessId, b.id);
  if (open > 0) return false; // the queue index has not caught up yet
  const completedAt = new Date().toISOString();
  try {
    await commit(
      [{ Update: transitionInput(b.businessId, b.id, ['running'], 'completed', { completed_at: completedAt, ...talliedCounts(counts) }) }],
      [broadcastCompleted(b, counts, completedAt)],
    );
  } catch (err) {
    if (!isConditionFailure(err)) throw err;
    return false; // cancelled or failed meanwhile: the next round sweeps
  }
  await updateUsageStatus(b, 'completed');
  return true;
}

/** Marks a page of what has not gone out as cancelled. 'done' when nothing is left, 'wait' for live claims. */
async function sweep(b: Broadcast): Promise<'done' | 'more' | 'wait'> {
  const reason = b.status === 'failed' ? 'broadcast_failed' : 'broadcast_cancelled';
  const head = await queueHead(b.businessId, b.id, SWEEP_PAGE);
  const now = Date.now();
  let cancelled = 0;
  let failed = 0;
  await Promise.all(head.map(async (r) => {
    if (r.state === 'pending') {
      if (await settleRecipient(b.businessId, b.id, r.contact_id, { state: 'cancelled', reason }, undefined, ['pending'])) cancelled++;
    } else if (r.state === 'sending') {
      if ((r.lease_until ?? 0) < now) {
        if (await resolveAbandoned(b, r)) failed++;
      }
    }
  }));
  await addCounts(b.businessId, b.id, { cancelled, failed }, { untilTallied: true });
  if (cancelled + failed > 0) return 'more';
  // Only live claims (or index entries that have not caught up) are left: look again later.
  if (head.length > 0) return 'wait';
  if (b.started_at) {
    const { counts } = await tallyRecipients(b.businessId, b.id);
    await transition(b.businessId, b.id, [b.status], b.status, talliedCounts(counts));
  }
  return 'done';
}
