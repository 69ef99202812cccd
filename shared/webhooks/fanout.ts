/**
 * Fan-out: one committed event becomes one delivery per matching subscription (its `events` holds the
 * name or `*`), each with a stable id (event × subscription), then the outbox item goes away.
 *
 * Every step is repeatable: deliveries are created only once (conditional writes), jobs may be sent
 * twice (the delivery worker drops what is no longer pending), and the outbox item is deleted last, so
 * a crash anywhere leaves it for the sweep. Before an event, any earlier event of the same ordering key
 * still in the outbox is fanned out first, so lanes always hold deliveries in commit order.
 */
import { createHash } from 'node:crypto';
import type { DomainEvent } from '#shared/events/outbox.ts';
import { enqueue } from '#shared/queue/queue.ts';
import type { Delivery, DeliveryJob, Subscription } from './model.ts';
import { createDelivery, listSubscriptions } from './repository.ts';
import { deleteOutboxItems, earlierEventsOfKey } from './outbox-store.ts';
import { logger } from '#shared/log/logger.ts';
import { eventSk, orderingKey } from './ordering.ts';

/** The same event to the same subscription always gets the same id (X-Webhook-ID, webhook-id). */
export function deliveryId(eventId: string, webhookId: string): string {
  const h = createHash('sha256').update(`${eventId}:${webhookId}`).digest('hex');
  // Shaped as an RFC 9562 version 8 (custom) UUID.
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${((parseInt(h[16], 16) & 0x3) | 0x8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export const subscribes = (s: Subscription, event: string): boolean => s.enabled && (s.events.includes('*') || s.events.includes(event));

export const newDelivery = (e: DomainEvent, s: Subscription, laneKey: string | null): Delivery => {
  const now = new Date().toISOString();
  return {
    id: deliveryId(e.id, s.id),
    businessId: e.businessId,
    webhookId: s.id,
    eventId: e.id,
    event: e.event,
    data: e.data,
    eventCreatedAt: e.createdAt,
    laneKey,
    laneSk: laneKey ? eventSk(e) : null,
    status: 'pending',
    attemptCount: 0,
    runStart: 0,
    attempts: [],
    nextAttemptAt: now,
    createdAt: now,
    updatedAt: now,
    deliveredAt: null,
    failedAt: null,
    failureReason: null,
  };
};

export const deliveryJob = (d: Pick<Delivery, 'businessId' | 'webhookId' | 'id'>, notBefore?: number): DeliveryJob => ({
  businessId: d.businessId,
  webhookId: d.webhookId,
  deliveryId: d.id,
  ...(notBefore ? { notBefore } : {}),
});

/** Subscriptions per business, read once per batch. */
export type SubscriptionCache = Map<string, Promise<Subscription[]>>;

async function fanOutOne(e: DomainEvent, subscriptions: Subscription[]): Promise<number> {
  const laneKey = orderingKey(e) ?? null;
  const matching = subscriptions.filter((s) => subscribes(s, e.event));
  await Promise.all(matching.map(async (s) => {
    const d = newDelivery(e, s, laneKey);
    await createDelivery(d);
    // Sent even when the delivery existed: a crash may have come between its creation and this job
    // (a job for a delivery that is already done is dropped by the delivery worker).
    await enqueue('webhook-deliveries', deliveryJob(d));
  }));
  return matching.length;
}

/**
 * Fans out `e` and, first, any earlier event of its ordering key still waiting in the outbox. Returns
 * the events fanned out, whose outbox items the caller deletes (in one batch for a whole SQS batch).
 */
async function fanOut(e: DomainEvent, cache: SubscriptionCache): Promise<DomainEvent[]> {
  let subs = cache.get(e.businessId);
  if (!subs) {
    subs = listSubscriptions(e.businessId);
    cache.set(e.businessId, subs);
  }
  const subscriptions = await subs;
  if (!subscriptions.some((s) => subscribes(s, e.event))) return [e];
  const key = orderingKey(e);
  const earlier = key ? await earlierEventsOfKey(e, key) : [];
  for (const prev of earlier) await fanOutOne(prev, subscriptions);
  await fanOutOne(e, subscriptions);
  return [...earlier, e];
}

/** Fans out one event and clears its outbox item. */
export async function fanOutEvent(e: DomainEvent, cache: SubscriptionCache = new Map()): Promise<void> {
  await deleteOutboxItems(await fanOut(e, cache));
}

/**
 * Fans out a batch of events in parallel; the outbox items of those that succeeded are deleted together,
 * last. Returns the ids of the events that failed (to be retried by the queue).
 */
export async function fanOutBatch(events: DomainEvent[]): Promise<Set<string>> {
  const cache: SubscriptionCache = new Map();
  const failed = new Set<string>();
  const done: DomainEvent[] = [];
  await Promise.all(events.map(async (e) => {
    try {
      done.push(...(await fanOut(e, cache)));
    } catch (err) {
      logger.warn('fan-out failed; the event will be retried', { eventId: e.id, error: err as Error });
      failed.add(e.id);
    }
  }));
  // A failure here leaves outbox items behind: the sweep publishes them again, and a repeat changes nothing.
  await deleteOutboxItems(done).catch((err) => logger.warn('outbox cleanup failed; the sweep will retry', { error: err as Error }));
  return failed;
}
