/**
 * Fan-out: one committed event becomes one delivery per matching subscription (its `events` holds the
 * name or `*`), each with a stable id (event × subscription), then the outbox item goes away.
 *
 * Every step is repeatable: deliveries that exist are not written again, jobs may be sent twice (the
 * delivery worker drops what is no longer pending), and the outbox item is deleted last, so a crash
 * anywhere leaves it for the sweep. Each worker fans out only the events it received, so two workers
 * never create the same delivery; a delivery whose key has an earlier event still in the outbox waits
 * (the delivery worker checks the outbox as well as the lane), so order holds even when events of one
 * key are fanned out out of order, or one's publish was lost until the sweep.
 *
 * Cost per batch: one PartiQL statement that reads the subscriptions of the batch's businesses and the
 * partitions of its ordering keys together, and batched writes; an event with a single delivery that
 * goes out at once writes nothing here (its first attempt records it). A delivery costs the table about
 * 0.4 requests, commit to 2xx.
 */
import { createHash } from 'node:crypto';
import type { DomainEvent } from '#shared/events/outbox.ts';
import { enqueueAll, type Outgoing } from '#shared/queue/queue.ts';
import { throwIfConfigurationError } from '#shared/queue/worker-failures.ts';
import { type Delivery, type DeliveryJob, type Subscription, subscribes } from './model.ts';
import { createDeliveries } from './delivery-store.ts';
import { setNextInLane } from './lane-store.ts';
import { deleteOutboxItems, fanOutReader, type FanOutReader } from './outbox-store.ts';
import { webhookSettings } from './settings.ts';
import { logger } from '#shared/log/logger.ts';
import { eventSk, orderingKey } from '#shared/events/ordering.ts';

/**
 * The same event to the same subscription always gets the same id (X-Webhook-ID, webhook-id). Shaped
 * as an RFC 9562 version 7 UUID: the event's time in milliseconds first, then bits of a hash of event
 * and subscription, so that ids sort by event time and a subscription's deliveries list newest first
 * straight from the table, with no index to keep up.
 */
export function deliveryId(eventId: string, webhookId: string, eventCreatedAt: string): string {
  const ms = Math.max(0, Date.parse(eventCreatedAt) || 0).toString(16).padStart(12, '0').slice(-12);
  const h = createHash('sha256').update(`${eventId}:${webhookId}`).digest('hex');
  return `${ms.slice(0, 8)}-${ms.slice(8, 12)}-7${h.slice(0, 3)}-${((parseInt(h[3], 16) & 0x3) | 0x8).toString(16)}${h.slice(4, 7)}-${h.slice(7, 19)}`;
}

export const newDelivery = (e: DomainEvent, s: Subscription, laneKey: string | null): Delivery => {
  const now = new Date().toISOString();
  return {
    id: deliveryId(e.id, s.id, e.createdAt),
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
    nextInLane: null,
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

/** A delivery the fan-out is about to create, and where it stands in its lane. */
interface Planned {
  delivery: Delivery;
  subscription: Subscription;
  /** Its event may have been fanned out before (a redelivered or re-published message): check first. */
  mayExist: boolean;
  /** First in its lane (or in none): its first attempt may go straight out. */
  head: boolean;
  /** Unknown lane state (a crowded key, or an earlier event of the key still in the outbox): the delivery worker checks. */
  unknownLane?: boolean;
  /** The delivery just before it in its lane, already in the table: told to wake this one when done. */
  after?: string;
}

interface Plan {
  /** Events fanned out (their outbox items go once the deliveries exist). */
  events: DomainEvent[];
  deliveries: Planned[];
}

const byCommitOrder = (a: DomainEvent, b: DomainEvent) => eventSk(a).localeCompare(eventSk(b));

/**
 * Plans the deliveries of a group of events of one business sharing an ordering key (or of one event
 * without a key). The group reads its business's subscriptions and its key's partition (consistently;
 * the batch's groups in one statement); the partition tells
 * for each new delivery whether it heads its subscription's lane or which delivery it follows. An
 * event of the key committed earlier and still in the outbox belongs to another worker (or its
 * publish was lost, and the sweep will publish it again): the group's deliveries wait behind it, and
 * the delivery worker checks their lane and the outbox before each sends.
 */
async function planGroup(group: DomainEvent[], again: Set<string>, read: FanOutReader): Promise<Plan> {
  const key = orderingKey(group[0]) ?? null;
  if (key) group.sort(byCommitOrder);
  const [subscriptions, partition] = await Promise.all([
    read.subscriptions(group[0].businessId),
    key ? read.partition(group[0].businessId, key, eventSk(group[group.length - 1])) : undefined,
  ]);
  if (!group.some((e) => subscriptions.some((s) => subscribes(s, e.event)))) return { events: group, deliveries: [] };
  if (!key || !partition) {
    return {
      events: group,
      deliveries: group.flatMap((e) => subscriptions.filter((s) => subscribes(s, e.event)).map((s) => ({ delivery: newDelivery(e, s, null), subscription: s, head: true, mayExist: again.has(e.id) }))),
    };
  }
  const ours = new Set(group.map((e) => e.id));
  // An event whose outbox item is gone was fanned out already (the item goes last): nothing to do.
  const inOutbox = new Set(partition.outbox.map((o) => o.id));
  const events = group.filter((e) => inOutbox.has(e.id));
  const othersBefore = (e: DomainEvent) => partition.outbox.some((o) => !ours.has(o.id) && o.sk < eventSk(e));
  const deliveries: Planned[] = [];
  const lastPlanned = new Map<string, Planned>();
  for (const e of events) {
    const waits = othersBefore(e);
    for (const s of subscriptions.filter((sub) => subscribes(sub, e.event))) {
      const d = newDelivery(e, s, key);
      const lane = partition.lanes?.get(s.id) ?? [];
      // Already in its lane: fanned out before, and pending (or its first attempt is in flight).
      if (lane.some((l) => l.deliveryId === d.id)) continue;
      const planned: Planned = { delivery: d, subscription: s, head: false, mayExist: again.has(e.id) };
      const before = lastPlanned.get(s.id);
      const inTable = lane.filter((l) => l.laneSk < d.laneSk!).at(-1);
      if (before) {
        before.delivery.nextInLane = d.id;
        planned.after = before.delivery.id;
      } else if (!partition.lanes || waits) planned.unknownLane = true;
      else if (inTable) planned.after = inTable.deliveryId;
      else planned.head = true;
      deliveries.push(planned);
      lastPlanned.set(s.id, planned);
    }
  }
  return { events, deliveries };
}

/** Longer than any first attempt takes (the send's time-out, plus the worker's own work). */
const IN_FLIGHT_MARGIN_SECONDS = webhookSettings.timeoutMs / 1000 + 5;

/** Jobs whose serialised delivery stays well inside SQS's 256 KB message limit carry it. */
const MAX_CARRIED_BYTES = 200_000;

/** A planned delivery's job: its reference and the subscription version the fan-out saw (never its URL or secret). */
const plannedJob = (p: Planned): DeliveryJob => ({ ...deliveryJob(p.delivery), subscriptionVersion: p.subscription.version });

const firstJob = (p: Planned): DeliveryJob => {
  const job: DeliveryJob = { ...plannedJob(p), delivery: p.delivery };
  return Buffer.byteLength(JSON.stringify(job)) <= MAX_CARRIED_BYTES ? job : plannedJob(p);
};

/**
 * Creates the planned deliveries (batched writes) and queues their jobs: a lane head's job carries the
 * delivery; a delivery behind another is woken by it when it is done, and also gets a job after the
 * lane wait in case that wake-up is lost.
 *
 * An event with a single delivery that goes out at once (the usual case: one subscription) leaves
 * nothing in the table here: its outbox item stays and holds the key's later events back, as a lane
 * item would, and the first attempt writes the record and clears the outbox item with its outcome.
 * Returns the ids of those events (their outbox items are not the fan-out's to delete).
 */
async function createAndQueue(planned: Planned[]): Promise<Set<string>> {
  const ref = (d: Pick<Delivery, 'webhookId' | 'id'>) => `${d.webhookId}/${d.id}`;
  const perEvent = new Map<string, number>();
  for (const p of planned) perEvent.set(p.delivery.eventId, (perEvent.get(p.delivery.eventId) ?? 0) + 1);
  const firstJobs = new Map(planned.filter((p) => p.head).map((p) => {
    // A repeated fan-out may meet a first attempt still in flight: its deliveries are written and leased as usual.
    const job = p.mayExist ? plannedJob(p) : firstJob(p);
    if (job.delivery && perEvent.get(p.delivery.eventId) === 1) job.clearsOutbox = true;
    return [ref(p.delivery), job];
  }));
  // A head whose job carries it is written by its first attempt, with the outcome; a lone one has no lane item either.
  const sentAtOnce = new Set([...firstJobs].filter(([, job]) => job.delivery).map(([key]) => key));
  const alone = new Set([...firstJobs].filter(([, job]) => job.clearsOutbox).map(([key]) => key));
  const check = new Set(planned.filter((p) => p.mayExist).map((p) => ref(p.delivery)));
  const { created, existing } = await createDeliveries(planned.map((p) => p.delivery), { sentAtOnce, alone, mayExist: (d) => check.has(ref(d)) });
  const createdIds = new Set(created.map(ref));
  const handedOver = new Set<string>();
  const jobs: Outgoing[] = [];
  const queue = (job: DeliveryJob, delaySeconds?: number) => jobs.push({ message: job, options: delaySeconds ? { delaySeconds } : {} });
  await Promise.all(planned.map(async (p) => {
    const d = p.delivery;
    if (!createdIds.has(ref(d))) return;
    if (p.head) {
      const job = firstJobs.get(ref(d))!;
      if (job.clearsOutbox) handedOver.add(d.eventId);
      // A repeated fan-out cannot tell a delivery never queued from a first attempt still in flight (it
      // leaves no trace until it is recorded): its job waits until such an attempt is surely over.
      queue(job, p.mayExist ? IN_FLIGHT_MARGIN_SECONDS : undefined);
      return;
    }
    // A predecessor created in this same fan-out already names this delivery as its next.
    const predecessorCreated = p.after !== undefined && createdIds.has(`${d.webhookId}/${p.after}`);
    // (A predecessor in flight without a record yet refuses the note: this one then polls its lane.)
    let waits = !p.unknownLane && p.after !== undefined;
    if (waits && !predecessorCreated) waits = await setNextInLane({ businessId: d.businessId, webhookId: d.webhookId, deliveryId: p.after! }, d.id);
    queue(plannedJob(p), waits ? webhookSettings.laneWaitSeconds : undefined);
  }));
  // Sent even when the delivery existed: a crash may have come between its creation and its job
  // (a job for a delivery that is already done is dropped by the delivery worker).
  for (const e of existing) if (e.status === 'pending') queue(deliveryJob(e));
  // All of the batch's jobs in SendMessageBatch requests of ten.
  await enqueueAll('webhook-deliveries', jobs);
  return handedOver;
}

/**
 * Fans out a batch of events: grouped by business and ordering key, each group planned in parallel,
 * then every delivery of the batch created in batched writes and queued; the outbox items of the
 * events fanned out are deleted together, last. `again` names the events that may have been fanned
 * out before (redelivered or re-published messages; by default all): only their deliveries are looked
 * up before they are written. Returns the ids of the events that failed (to be retried by the queue).
 */
export async function fanOutBatch(events: DomainEvent[], again: Set<string> = new Set(events.map((e) => e.id))): Promise<Set<string>> {
  // The groups' reads (subscriptions and key partitions), gathered into one statement.
  const read = fanOutReader();
  const failed = new Set<string>();
  const groups = new Map<string, DomainEvent[]>();
  for (const e of events) {
    const key = orderingKey(e);
    const group = key ? `${e.businessId}\n${key}` : `\n${e.id}`;
    groups.set(group, [...(groups.get(group) ?? []), e]);
  }
  const plans: Plan[] = [];
  await Promise.all([...groups.values()].map(async (group) => {
    try {
      plans.push(await planGroup(group, again, read));
    } catch (err) {
      throwIfConfigurationError(err);
      logger.warn('fan-out failed; the events will be retried', { eventIds: group.map((e) => e.id), error: err as Error });
      for (const e of group) failed.add(e.id);
    }
  }));
  let handedOver: Set<string>;
  try {
    handedOver = await createAndQueue(plans.flatMap((p) => p.deliveries));
  } catch (err) {
    throwIfConfigurationError(err);
    logger.warn('fan-out failed; the events will be retried', { error: err as Error });
    for (const e of events) failed.add(e.id);
    return failed;
  }
  // A failure here leaves outbox items behind: the sweep publishes them again, and a repeat changes nothing.
  await deleteOutboxItems(plans.flatMap((p) => p.events).filter((e) => !handedOver.has(e.id))).catch((err) => logger.warn('outbox cleanup failed; the sweep will retry', { error: err as Error }));
  return failed;
}
