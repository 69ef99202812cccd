/**
 * How a broadcast ends: `completed` once every recipient is settled (exact counts tallied from the recipients,
 * `broadcast.completed`); `failed` on an error no recipient can get past (`broadcast.failed`); and, for a cancelled
 * or failed broadcast, the sweep that marks what has not gone out as `cancelled`. A cancelled or failed broadcast that
 * had started sending gets its end event (`broadcast.completed` with status `cancelled`, or `broadcast.failed`) with the
 * sweep's final tally.
 */
import { commit } from '#shared/events/outbox.ts';
import { logger } from '#shared/log/logger.ts';
import { isConditionFailure as isSingleConditionFailure } from '#shared/store/conditional.ts';
import { cancelledByCondition } from '#shared/store/transact.ts';
import { getBroadcast, transition, transitionInput, updateUsageStatus } from './repository.ts';
import { settleRecipient, queueHead } from './recipients.ts';
import { addCounts, isTallied, statusChanges, tallyGuard, tallyRecipients, talliedCounts } from './counts.ts';
import { broadcastCancelled, broadcastCompleted, broadcastFailed } from './events.ts';
import { enqueueRun } from './messages.ts';
import { OUTCOME_UNKNOWN } from './pipeline.ts';
import type { Broadcast, BroadcastError, Counts, Recipient } from './model.ts';

const SWEEP_PAGE = 100;

/** A single write's or a transaction's condition did not hold: someone else changed the broadcast first. */
export const isConditionFailure = (err: unknown) => isSingleConditionFailure(err) || cancelledByCondition(err);

/**
 * Commits `failed` for a running broadcast. One that had not started sending emits `broadcast.failed` at once; a run
 * that had started marks what has not gone out, and its sweep emits the event with the final counts (as a cancel's).
 */
export async function failBroadcast(b: Broadcast, error: BroadcastError): Promise<void> {
  const failedAt = new Date().toISOString();
  const current = (await getBroadcast(b.businessId, b.id)) ?? b;
  try {
    await commit(
      [{ Update: transitionInput(b.businessId, b.id, ['running'], 'failed', { failed_at: failedAt, error }) }],
      current.started_at ? [] : [broadcastFailed(current, error, current.counts, failedAt)],
    );
  } catch (err) {
    if (!isConditionFailure(err)) throw err;
    return;
  }
  logger.warn('broadcast failed', { broadcastId: b.id, error });
  await updateUsageStatus(b, 'failed');
  if (current.started_at) await enqueueRun(b.businessId, b.id);
}

/** Resolves a claim whose worker died, without sending (cancelled or failed broadcasts). */
async function resolveAbandoned(b: Broadcast, r: Recipient): Promise<boolean> {
  return settleRecipient(b.businessId, b.id, r.contact_id, { state: 'failed', message_id: null, error: OUTCOME_UNKNOWN }, r.lease);
}

/** Tallies taken again because delivery statuses kept landing while they were taken (then the next round goes on). */
const TALLY_TRIES = 5;

/** Nothing left in the queue: tally every recipient and complete (exact counts, `broadcast.completed`). */
export async function complete(b: Broadcast): Promise<boolean> {
  for (let attempt = 1; attempt <= TALLY_TRIES; attempt++) {
    const seen = await statusChanges(b.businessId, b.id);
    const { counts, open } = await tallyRecipients(b.businessId, b.id);
    if (open > 0) return false; // the queue index has not caught up yet
    const completedAt = new Date().toISOString();
    try {
      await commit(
        [{ Update: transitionInput(b.businessId, b.id, ['running'], 'completed', { completed_at: completedAt, ...talliedCounts(counts) }, ...tallyGuard(seen)) }],
        [broadcastCompleted(b, counts, completedAt)],
      );
      await updateUsageStatus(b, 'completed');
      return true;
    } catch (err) {
      if (!isConditionFailure(err)) throw err;
      // Cancelled or failed meanwhile (the next round sweeps), or a status overtook the tally (take it again).
      if ((await getBroadcast(b.businessId, b.id))?.status !== 'running') return false;
    }
  }
  return false;
}

/** Marks a page of what has not gone out as cancelled. 'done' when nothing is left, 'wait' for live claims. */
export async function sweep(b: Broadcast): Promise<'done' | 'more' | 'wait'> {
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
  // The exact counts of what went out and what did not; a status that overtakes a tally has it taken again. A broadcast
  // cancelled while its audience was being frozen never started but has recipients: they are counted too (its
  // `total` stayed 0 beside `cancelled: N`), without a second end event (the cancel sent it).
  for (let attempt = 1; attempt <= TALLY_TRIES; attempt++) {
    const seen = await statusChanges(b.businessId, b.id);
    const { counts } = await tallyRecipients(b.businessId, b.id);
    if (!b.started_at && counts.total === 0) return 'done';
    const ended = b.started_at && (b.status === 'cancelled' || b.status === 'failed')
      ? await endStopped(b, counts, seen)
      : await transition(b.businessId, b.id, [b.status], b.status, talliedCounts(counts), ...tallyGuard(seen));
    if (ended) return 'done';
  }
  return 'wait';
}

/**
 * A cancelled or failed run's first tally, with its end event: the counts of what went out before the cancel or the
 * failure stopped it and what that left out. A later tally (a duplicate run) finds it done and emits nothing.
 */
async function endStopped(b: Broadcast, counts: Counts, seen: number): Promise<boolean> {
  const [guard, values] = tallyGuard(seen);
  const event = b.status === 'cancelled' ? broadcastCancelled(b, counts, b.cancelled_at!) : broadcastFailed(b, b.error!, counts, b.failed_at!);
  try {
    await commit(
      [{ Update: transitionInput(b.businessId, b.id, [b.status], b.status, talliedCounts(counts), `${guard} AND attribute_not_exists(counts_tallied)`, values) }],
      [event],
    );
    return true;
  } catch (err) {
    if (!isConditionFailure(err)) throw err;
    // Tallied already (it ended), or a status overtook this tally (take it again).
    return isTallied(b.businessId, b.id);
  }
}
