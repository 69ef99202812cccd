/** The broadcast events of the contract, with their payloads (the contract shows none: these are ours). */
import { newEvent } from '#shared/events/outbox.ts';
import { countsView, type Broadcast, type BroadcastError, type Counts } from './model.ts';

const base = (b: Broadcast) => ({ broadcast_id: b.id, name: b.name, audience: b.audience, template: templateName(b) });

const templateName = (b: Broadcast): string | null =>
  (typeof b.template.templateName === 'string' ? b.template.templateName : (b.template.template as { name?: string } | undefined)?.name) ?? null;

/** Sending starts: the audience is frozen. */
export const broadcastSent = (b: Broadcast, counts: Counts, startedAt: string) =>
  newEvent(b.businessId, 'broadcast.sent', { ...base(b), status: 'running', recipients: counts.total, skipped: counts.skipped, started_at: startedAt });

export const broadcastCompleted = (b: Broadcast, counts: Counts, completedAt: string) =>
  newEvent(b.businessId, 'broadcast.completed', { ...base(b), status: 'completed', counts: countsView(counts), started_at: b.started_at, completed_at: completedAt });

/**
 * Cancelled: the broadcast's end for its subscribers (the contract names no cancel event, so it is the end event with
 * status `cancelled`). Emitted by the cancel for a broadcast that had not started sending, else once its run has
 * stopped and marked the rest cancelled: `counts` are then final (what went out before the cancel stopped it included).
 */
export const broadcastCancelled = (b: Broadcast, counts: Counts, cancelledAt: string) =>
  newEvent(b.businessId, 'broadcast.completed', { ...base(b), status: 'cancelled', counts: countsView(counts), started_at: b.started_at, cancelled_at: cancelledAt });

export const broadcastFailed = (b: Broadcast, error: BroadcastError, counts: Counts, failedAt: string) =>
  newEvent(b.businessId, 'broadcast.failed', { ...base(b), status: 'failed', error, counts: countsView(counts), failed_at: failedAt });
