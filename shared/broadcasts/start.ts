/**
 * A broadcast's start: a scheduled broadcast becomes running (or waits again when its schedule fired early), and
 * one start at a time freezes the audience into recipient items and commits `broadcast.sent` with the frozen
 * counts; then the first run is enqueued.
 */
import { randomUUID } from 'node:crypto';
import { commit } from '#shared/events/outbox.ts';
import { enqueue } from '#shared/queue/queue.ts';
import { getBusiness } from '#shared/business/repository.ts';
import { getBroadcast, transition, transitionInput, updateUsageStatus } from './repository.ts';
import { deleteRecipients, putRecipients } from './recipients.ts';
import { AudienceUnavailable, freezeAudience } from './audience.ts';
import { broadcastSent } from './events.ts';
import { scheduleStart } from './scheduler.ts';
import { enqueueRun, type BroadcastMessage } from './messages.ts';
import { failBroadcast, isConditionFailure } from './completion.ts';
import type { Broadcast, Counts } from './model.ts';

const EARLY_START_TOLERANCE_MS = 1500;

export async function start(businessId: string, id: string, receiveCount: number): Promise<void> {
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
    if (!isConditionFailure(err)) throw err;
    // Cancelled while freezing: it ended then, with no recipients (its end event said so), and keeps none.
    const current = await getBroadcast(b.businessId, b.id);
    if (current?.status === 'cancelled' && !current.started_at) {
      await deleteRecipients(b.businessId, b.id, recipients.map((r) => r.contact_id));
      return;
    }
    // Frozen by a concurrent start: the run below carries on.
  }
  await enqueueRun(b.businessId, b.id);
}
