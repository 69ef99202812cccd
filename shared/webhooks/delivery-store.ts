/**
 * Delivery records: pk B#{bid}#WH#{id}, sk D#{deliveryId} (time-ordered ids, so a subscription's
 * deliveries list newest first), each with its attempts; kept 30 days.
 */
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { applied, isConditionFailure } from '#shared/store/conditional.ts';
import { keys } from '#shared/store/keys.ts';
import { batchGetAll, batchWriteAll, type WriteRequest } from '#shared/store/batch.ts';
import type { Attempt, Delivery, DeliveryStatus } from './model.ts';
import { laneItem, leaveLane, setLaneNextAttempt } from './lane-store.ts';
import { eventOutboxKey } from './outbox-store.ts';
import { fromTableItem } from './table-item.ts';
import { queryListPage } from '#shared/store/query.ts';

/** Delivery history is kept 30 days (well past the ~3 days of retries), then expires through the table's TTL. */
const DELIVERY_RETENTION_SECONDS = 30 * 86_400;

const deliveryItem = (d: Delivery) => ({
  ...keys.delivery(d.businessId, d.webhookId, d.id),
  type: 'delivery',
  ttl: Math.floor(Date.parse(d.createdAt) / 1000) + DELIVERY_RETENTION_SECONDS,
  ...d,
});

/** Creates one delivery that waits in no lane (test deliveries), only once. False when it existed. */
export async function createDelivery(d: Delivery): Promise<boolean> {
  return applied(db.send(new PutCommand({ TableName: table(), Item: deliveryItem(d), ConditionExpression: 'attribute_not_exists(pk)' })));
}

export interface CreatedDeliveries {
  /** Written now (or, for those sent at once, their lane items). */
  created: Delivery[];
  /** Already there (a repeated fan-out): id and status, so the caller can re-queue a pending one. */
  existing: Pick<Delivery, 'businessId' | 'webhookId' | 'id' | 'status' | 'laneKey' | 'laneSk'>[];
}

/**
 * Creates deliveries (and the lane items of those with an ordering key) in batches: one read of which
 * of those that `mayExist` do exist, then batched writes of the rest. The records of deliveries in `sentAtOnce` are not written:
 * their first attempt, queued with the delivery itself, writes them with its outcome (their lane
 * items, written now, hold their place meanwhile).
 *
 * A repeated fan-out of the same event (sweep, redelivered message: `mayExist`) finds its deliveries
 * and writes nothing (a pending one gets its lane item again: a crash may have come between the two
 * writes); what it does write, it writes conditionally, one by one.
 */
export interface CreateOptions {
  /** `webhookId/id` of deliveries whose first attempt writes their record. */
  sentAtOnce?: Set<string>;
  /** Of those, the ones without a lane item (their event's outbox item holds the lane). */
  alone?: Set<string>;
  /** Whether a delivery may exist already (only those are looked up). */
  mayExist?: (d: Delivery) => boolean;
}

export async function createDeliveries(ds: Delivery[], { sentAtOnce = new Set(), alone = new Set(), mayExist = () => true }: CreateOptions = {}): Promise<CreatedDeliveries> {
  if (ds.length === 0) return { created: [], existing: [] };
  const toCheck = ds.filter(mayExist);
  const found = toCheck.length === 0 ? [] : await batchGetAll(toCheck.map((d) => keys.delivery(d.businessId, d.webhookId, d.id)), { projection: 'businessId, webhookId, id, #s, laneKey, laneSk', names: { '#s': 'status' } });
  const existingIds = new Set(found.map((f) => `${f.webhookId}/${f.id}`));
  const existing = found as CreatedDeliveries['existing'];
  const created: Delivery[] = [];
  const writes: WriteRequest[] = [];
  // Those that may exist and were not found are written only if they still do not exist: a first attempt
  // in flight may record its delivery between the look-up and the write (its record then stands).
  await Promise.all(ds.filter((d) => mayExist(d) && !existingIds.has(`${d.webhookId}/${d.id}`)).map(async (d) => {
    if (await createDelivery(d)) {
      created.push(d);
      if (d.laneKey && d.laneSk) writes.push({ PutRequest: { Item: laneItem(d) } });
    }
  }));
  for (const d of ds.filter((x) => !mayExist(x))) {
    const ref = `${d.webhookId}/${d.id}`;
    created.push(d);
    if (!sentAtOnce.has(ref)) writes.push({ PutRequest: { Item: deliveryItem(d) } });
    if (d.laneKey && d.laneSk && !alone.has(ref)) writes.push({ PutRequest: { Item: laneItem(d) } });
  }
  for (const e of existing) {
    if (e.status === 'pending' && e.laneKey && e.laneSk) {
      const d = ds.find((x) => x.id === e.id && x.webhookId === e.webhookId)!;
      writes.push({ PutRequest: { Item: laneItem({ ...d, laneKey: e.laneKey, laneSk: e.laneSk }) } });
    }
  }
  await batchWriteAll(writes);
  return { created, existing };
}

export async function getDelivery(bid: string, webhookId: string, id: string): Promise<Delivery | undefined> {
  const out = await db.send(new GetCommand({ TableName: table(), Key: keys.delivery(bid, webhookId, id), ConsistentRead: true }));
  return out.Item ? fromTableItem<Delivery>(out.Item) : undefined;
}

/** A subscription's deliveries, newest first (their ids sort by event time). */
export async function listDeliveries(bid: string, webhookId: string, limit: number, start?: Record<string, unknown>) {
  const { items, lastKey } = await queryListPage({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :d)',
    ExpressionAttributeValues: { ':pk': keys.deliveriesPk(bid, webhookId), ':d': keys.deliverySkPrefix },
    ScanIndexForward: false,
  }, { limit, startKey: start });
  return { items: items.map((i) => fromTableItem<Delivery>(i)), last: lastKey };
}

export interface Outcome {
  status: DeliveryStatus;
  attempt?: Attempt;
  nextAttemptAt?: string;
  failureReason?: string | null;
}

/**
 * Records an attempt (or a give-up without one) and releases the lease, then updates the delivery's
 * lane item: a delivery that is done leaves its lane, so the next one of the lane can go (a crash in
 * between leaves a lane item of a finished delivery, which the delivery worker clears when it finds it).
 * Returns the delivery as recorded.
 */
export async function recordOutcome(d: Delivery, outcome: Outcome): Promise<Delivery> {
  const now = new Date().toISOString();
  const values: Record<string, unknown> = { ':s': outcome.status, ':now': now };
  const sets = ['#s = :s', 'updatedAt = :now'];
  if (outcome.attempt) {
    sets.push('attempts = list_append(if_not_exists(attempts, :empty), :a)', 'attemptCount = if_not_exists(attemptCount, :zero) + :one');
    Object.assign(values, { ':a': [outcome.attempt], ':empty': [], ':zero': 0, ':one': 1 });
  }
  if (outcome.nextAttemptAt) {
    sets.push('nextAttemptAt = :next');
    values[':next'] = outcome.nextAttemptAt;
  }
  if (outcome.status === 'delivered') sets.push('deliveredAt = :now');
  if (outcome.status === 'failed') {
    sets.push('failedAt = :now', 'failureReason = :reason');
    values[':reason'] = outcome.failureReason ?? null;
  }
  const out = await db.send(new UpdateCommand({
    TableName: table(),
    Key: keys.delivery(d.businessId, d.webhookId, d.id),
    UpdateExpression: `SET ${sets.join(', ')} REMOVE leaseUntil`,
    ExpressionAttributeNames: { '#s': 'status' },
    ExpressionAttributeValues: values,
    ReturnValues: 'ALL_NEW',
  }));
  const recorded = fromTableItem<Delivery>(out.Attributes!);
  if (outcome.status !== 'pending') await leaveLane(d);
  else await setLaneNextAttempt(d, outcome.nextAttemptAt ?? now);
  return recorded;
}

/** The delivery as it stands once `outcome` is recorded. */
export function withOutcome(d: Delivery, outcome: Outcome, now: string): Delivery {
  const next: Delivery = { ...d, status: outcome.status, updatedAt: now };
  delete next.leaseUntil;
  if (outcome.attempt) {
    next.attempts = [...(d.attempts ?? []), outcome.attempt];
    next.attemptCount = (d.attemptCount ?? 0) + 1;
  }
  if (outcome.nextAttemptAt) next.nextAttemptAt = outcome.nextAttemptAt;
  if (outcome.status === 'delivered') next.deliveredAt = now;
  if (outcome.status === 'failed') {
    next.failedAt = now;
    next.failureReason = outcome.failureReason ?? null;
  }
  return next;
}

/**
 * Records the outcomes of deliveries whose whole record the caller holds (first attempts), in batched
 * writes: each record replaced, and each lane item updated (still pending) or removed (done).
 */
export async function recordOutcomes(list: { delivery: Delivery; outcome: Outcome; clearsOutbox?: boolean }[]): Promise<void> {
  const now = new Date().toISOString();
  const writes: WriteRequest[] = [];
  // A batched write applies its items in no set order: an outbox item that holds a lane goes only once
  // the lane item that takes over from it is written, or a later event of the key could slip through.
  const afterwards: WriteRequest[] = [];
  for (const { delivery, outcome, clearsOutbox } of list) {
    const d = withOutcome(delivery, outcome, now);
    writes.push({ PutRequest: { Item: deliveryItem(d) } });
    const laned = Boolean(d.laneKey && d.laneSk);
    if (laned) {
      // Still pending: the lane item holds its place (a lone delivery gets one now, as its outbox item goes).
      if (d.status === 'pending') writes.push({ PutRequest: { Item: laneItem(d) } });
      else if (!clearsOutbox) writes.push({ DeleteRequest: { Key: keys.deliveryLane(d.businessId, d.webhookId, d.laneKey!, d.laneSk!) } });
    }
    if (clearsOutbox) (laned && d.status === 'pending' ? afterwards : writes).push({ DeleteRequest: { Key: eventOutboxKey(d) } });
  }
  await batchWriteAll(writes);
  await batchWriteAll(afterwards);
}

/** Makes a finished delivery pending again for a manual redelivery (outside its lane: the user asked for it now). */
export async function reopenDelivery(d: Delivery): Promise<Delivery | undefined> {
  const now = new Date().toISOString();
  const out = await db.send(new UpdateCommand({
    TableName: table(),
    Key: keys.delivery(d.businessId, d.webhookId, d.id),
    // runStart gives the redelivery a full series of attempts of its own.
    UpdateExpression: 'SET #s = :pending, nextAttemptAt = :now, updatedAt = :now, laneKey = :null, laneSk = :null, deliveredAt = :null, failedAt = :null, failureReason = :null, runStart = attemptCount REMOVE leaseUntil',
    // A pending delivery is still in its lane and on the queue: reopening it would only duplicate it.
    ConditionExpression: 'attribute_exists(pk) AND #s <> :pending',
    ExpressionAttributeNames: { '#s': 'status' },
    ExpressionAttributeValues: { ':pending': 'pending', ':now': now, ':null': null },
    ReturnValues: 'ALL_NEW',
  })).catch((err) => {
    if (isConditionFailure(err)) return undefined;
    throw err;
  });
  return out ? fromTableItem<Delivery>(out.Attributes!) : undefined;
}
