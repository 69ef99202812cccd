/**
 * Table access of the webhook area: subscriptions (pk B#{bid}#WHS, sk WH#{id}), their deliveries
 * (pk B#{bid}#WH#{id}, sk D#{deliveryId}, time-ordered ids) and the ordering lanes (one small item per
 * pending delivery that has an ordering key).
 */
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { applied, isConditionFailure } from '#shared/store/conditional.ts';
import { keys } from '#shared/store/keys.ts';
import { cancelledByCondition } from '#shared/store/transact.ts';
import { queryAll } from '#shared/store/query.ts';
import { batchGetAll, batchWriteAll, type WriteRequest } from '#shared/store/batch.ts';
import { eventSk, UNORDERED } from './ordering.ts';
import type { Attempt, Delivery, DeliveryStatus, Subscription } from './model.ts';

const KEY_ATTRS = ['pk', 'sk', 'gsi1pk', 'gsi1sk', 'type', 'ttl'];
const strip = <T>(item: Record<string, unknown>): T => {
  const out = { ...item };
  for (const k of KEY_ATTRS) delete out[k];
  return out as T;
};

// ---- subscriptions ----

export async function putSubscription(s: Subscription): Promise<void> {
  await db.send(new TransactWriteCommand({
    TransactItems: [
      { Put: { TableName: table(), Item: { ...keys.webhook(s.businessId, s.id), type: 'webhook', ...s }, ConditionExpression: 'attribute_not_exists(pk)' } },
      { Put: { TableName: table(), Item: { ...keys.webhookOwner(s.id), type: 'webhookOwner', businessId: s.businessId } } },
    ],
  }));
}

/** The business that owns a subscription id, if the id exists at all. */
export async function subscriptionOwner(id: string): Promise<string | undefined> {
  const out = await db.send(new GetCommand({ TableName: table(), Key: keys.webhookOwner(id) }));
  return out.Item?.businessId as string | undefined;
}

export async function getSubscription(bid: string, id: string): Promise<Subscription | undefined> {
  const out = await db.send(new GetCommand({ TableName: table(), Key: keys.webhook(bid, id), ConsistentRead: true }));
  return out.Item ? strip<Subscription>(out.Item) : undefined;
}

/** Every attribute of a subscription (what the fan-out's statement selects of the subscriptions' partition). */
export const SUBSCRIPTION_ATTRIBUTES = [
  'id', 'businessId', 'name', 'url', 'events', 'secret', 'enabled', 'disabledReason', 'disabledAt', 'failingSince', 'createdAt', 'updatedAt',
] as const satisfies readonly (keyof Subscription)[];
// A field added to Subscription and not to the list above fails to compile here.
const everyAttributeListed: Exclude<keyof Subscription, (typeof SUBSCRIPTION_ATTRIBUTES)[number]> extends never ? true : never = true;
void everyAttributeListed;

/** Subscriptions as the API lists them: oldest first. */
export const subscriptionsInOrder = (items: Record<string, unknown>[]): Subscription[] =>
  items.map((item) => strip<Subscription>(item)).sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));

export async function listSubscriptions(bid: string, consistent = false): Promise<Subscription[]> {
  return subscriptionsInOrder(await queryAll({
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.webhooksPk(bid) },
    ConsistentRead: consistent,
  }));
}

/** Sets the given fields of an existing subscription; undefined when it does not exist. */
export async function updateSubscription(bid: string, id: string, fields: Partial<Subscription>): Promise<Subscription | undefined> {
  const entries = Object.entries(fields).filter(([, val]) => val !== undefined);
  if (entries.length === 0) return getSubscription(bid, id);
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const sets = entries.map(([k, val], i) => {
    names[`#f${i}`] = k;
    values[`:v${i}`] = val;
    return `#f${i} = :v${i}`;
  });
  try {
    const out = await db.send(new UpdateCommand({
      TableName: table(),
      Key: keys.webhook(bid, id),
      UpdateExpression: `SET ${sets.join(', ')}`,
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
      ReturnValues: 'ALL_NEW',
    }));
    return strip<Subscription>(out.Attributes!);
  } catch (err) {
    if (isConditionFailure(err)) return undefined;
    throw err;
  }
}

export async function deleteSubscription(bid: string, id: string): Promise<boolean> {
  try {
    await db.send(new TransactWriteCommand({
      TransactItems: [
        { Delete: { TableName: table(), Key: keys.webhook(bid, id), ConditionExpression: 'attribute_exists(pk)' } },
        { Delete: { TableName: table(), Key: keys.webhookOwner(id) } },
      ],
    }));
    return true;
  } catch (err) {
    if (cancelledByCondition(err)) return false;
    throw err;
  }
}

/** Remembers when a run of failures started (first failure only). */
export async function markFailing(bid: string, id: string, since: string): Promise<void> {
  await applied(db.send(new UpdateCommand({
    TableName: table(),
    Key: keys.webhook(bid, id),
    UpdateExpression: 'SET failingSince = :s',
    ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(failingSince) OR failingSince = :null)',
    ExpressionAttributeValues: { ':s': since, ':null': null },
  })));
}

export async function clearFailing(bid: string, id: string): Promise<void> {
  await applied(db.send(new UpdateCommand({
    TableName: table(),
    Key: keys.webhook(bid, id),
    UpdateExpression: 'SET failingSince = :null',
    ConditionExpression: 'attribute_exists(pk)',
    ExpressionAttributeValues: { ':null': null },
  })));
}

// ---- deliveries ----

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

const laneItem = (d: Delivery) => ({
  ...keys.deliveryLane(d.businessId, d.webhookId, d.laneKey!, d.laneSk!),
  type: 'lane',
  webhookId: d.webhookId,
  laneSk: d.laneSk,
  deliveryId: d.id,
  nextAttemptAt: d.nextAttemptAt,
});

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

/**
 * Tells a pending delivery which delivery waits behind it in its lane, so that it wakes that one as
 * soon as it is done. False when it is no longer pending (then the follower need not wait for it).
 */
export async function setNextInLane(ref: { businessId: string; webhookId: string; deliveryId: string }, next: string): Promise<boolean> {
  return applied(db.send(new UpdateCommand({
    TableName: table(),
    Key: keys.delivery(ref.businessId, ref.webhookId, ref.deliveryId),
    UpdateExpression: 'SET nextInLane = :n',
    ConditionExpression: '#s = :pending',
    ExpressionAttributeNames: { '#s': 'status' },
    ExpressionAttributeValues: { ':n': next, ':pending': 'pending' },
  })));
}

/** Takes a finished delivery out of its lane (idempotent). */
export async function leaveLane(d: Pick<Delivery, 'businessId' | 'webhookId' | 'laneKey' | 'laneSk'>): Promise<void> {
  if (!d.laneKey || !d.laneSk) return;
  await db.send(new DeleteCommand({ TableName: table(), Key: keys.deliveryLane(d.businessId, d.webhookId, d.laneKey, d.laneSk) }));
}

export async function getDelivery(bid: string, webhookId: string, id: string): Promise<Delivery | undefined> {
  const out = await db.send(new GetCommand({ TableName: table(), Key: keys.delivery(bid, webhookId, id), ConsistentRead: true }));
  return out.Item ? strip<Delivery>(out.Item) : undefined;
}

/** A subscription's deliveries, newest first (their ids sort by event time). */
export async function listDeliveries(bid: string, webhookId: string, limit: number, start?: Record<string, unknown>) {
  const out = await db.send(new QueryCommand({
    TableName: table(),
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :d)',
    ExpressionAttributeValues: { ':pk': keys.deliveriesPk(bid, webhookId), ':d': 'D#' },
    ScanIndexForward: false,
    Limit: limit,
    ExclusiveStartKey: start,
  }));
  return { items: (out.Items ?? []).map((i) => strip<Delivery>(i)), last: out.LastEvaluatedKey };
}

export interface LaneEntry {
  laneSk: string;
  deliveryId: string;
  nextAttemptAt: string;
}

export const laneEntry = (item: Record<string, any>): LaneEntry => ({ laneSk: item.laneSk, deliveryId: item.deliveryId, nextAttemptAt: item.nextAttemptAt });

/** The first two deliveries of a lane: the head (the only one that may be sent) and the one behind it. */
export async function laneFront(bid: string, webhookId: string, laneKey: string): Promise<LaneEntry[]> {
  const out = await db.send(new QueryCommand({
    TableName: table(),
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :lane)',
    ExpressionAttributeValues: { ':pk': keys.eventKeyPk(bid, laneKey), ':lane': keys.deliveryLanePrefix(webhookId) },
    ConsistentRead: true,
    Limit: 2,
  }));
  return (out.Items ?? []).map(laneEntry);
}

/** Subscriptions by key in one round trip (the delivery worker reads those of a whole batch at once). */
export async function getSubscriptions(refs: { businessId: string; webhookId: string }[]): Promise<Map<string, Subscription>> {
  const unique = [...new Map(refs.map((r) => [`${r.businessId}/${r.webhookId}`, r])).values()];
  const items = await batchGetAll(unique.map((r) => keys.webhook(r.businessId, r.webhookId)));
  return new Map(items.map((item) => {
    const s = strip<Subscription>(item);
    return [`${s.businessId}/${s.id}`, s];
  }));
}

export type Claim =
  | { claimed: true; delivery: Delivery }
  | { claimed: false; delivery: Delivery | undefined };

/**
 * Takes a pending delivery for one send (a lease a little longer than the send can take), so that
 * duplicate queue messages never send it twice at once, and returns it. A scheduled retry (`attempt`)
 * only claims the attempt it was scheduled for; any other job only a delivery that is due.
 * When the claim fails, the current record is returned so the caller can tell why.
 */
export async function claimDelivery(ref: { businessId: string; webhookId: string; deliveryId: string }, leaseMs: number, attempt: number | undefined, dueBy: string): Promise<Claim> {
  const now = Date.now();
  const values: Record<string, unknown> = { ':until': now + leaseMs, ':now': now, ':pending': 'pending' };
  let condition = '#s = :pending AND (attribute_not_exists(leaseUntil) OR leaseUntil < :now)';
  if (attempt !== undefined) {
    condition += ' AND attemptCount = :prev';
    values[':prev'] = attempt - 1;
  } else {
    condition += ' AND nextAttemptAt <= :due';
    values[':due'] = dueBy;
  }
  try {
    const out = await db.send(new UpdateCommand({
      TableName: table(),
      Key: keys.delivery(ref.businessId, ref.webhookId, ref.deliveryId),
      UpdateExpression: 'SET leaseUntil = :until',
      ConditionExpression: condition,
      ExpressionAttributeNames: { '#s': 'status' },
      ExpressionAttributeValues: values,
      ReturnValues: 'ALL_NEW',
    }));
    return { claimed: true, delivery: strip<Delivery>(out.Attributes!) };
  } catch (err) {
    if (!isConditionFailure(err)) throw err;
    return { claimed: false, delivery: await getDelivery(ref.businessId, ref.webhookId, ref.deliveryId) };
  }
}

/** Gives the lease back without an attempt (the delivery turned out to be waiting in its lane). */
export async function releaseDelivery(d: Delivery): Promise<void> {
  await db.send(new UpdateCommand({ TableName: table(), Key: keys.delivery(d.businessId, d.webhookId, d.id), UpdateExpression: 'REMOVE leaseUntil' }));
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
  const recorded = strip<Delivery>(out.Attributes!);
  if (d.laneKey && d.laneSk) {
    if (outcome.status !== 'pending') await leaveLane(d);
    else {
      // A redelivered delivery has no lane item any more.
      await applied(db.send(new UpdateCommand({
        TableName: table(),
        Key: keys.deliveryLane(d.businessId, d.webhookId, d.laneKey, d.laneSk),
        UpdateExpression: 'SET nextAttemptAt = :n',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':n': outcome.nextAttemptAt ?? now },
      })));
    }
  }
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

/** The outbox item of a delivery's event. */
export const eventOutboxKey = (d: Pick<Delivery, 'businessId' | 'laneKey' | 'eventCreatedAt' | 'eventId'>) =>
  keys.outbox(d.businessId, d.laneKey ?? UNORDERED, eventSk({ createdAt: d.eventCreatedAt, id: d.eventId }));

/** Gives a pending delivery its lane item (a lone delivery whose first attempt failed). */
export async function joinLane(d: Delivery): Promise<void> {
  if (!d.laneKey || !d.laneSk) return;
  await db.send(new PutCommand({ TableName: table(), Item: laneItem(d) }));
}

/** Deletes the outbox item of a delivery's event. */
export async function clearEventOutbox(d: Delivery): Promise<void> {
  await db.send(new DeleteCommand({ TableName: table(), Key: eventOutboxKey(d) }));
}

/** Makes a finished delivery pending again for a manual redelivery (outside its lane: the user asked for it now). */
export async function reopenDelivery(d: Delivery): Promise<Delivery | undefined> {
  const now = new Date().toISOString();
  const out = await db.send(new UpdateCommand({
    TableName: table(),
    Key: keys.delivery(d.businessId, d.webhookId, d.id),
    // runStart gives the redelivery a full series of attempts of its own.
    UpdateExpression: 'SET #s = :pending, nextAttemptAt = :now, updatedAt = :now, laneKey = :null, laneSk = :null, failureReason = :null, runStart = attemptCount REMOVE leaseUntil',
    // A pending delivery is still in its lane and on the queue: reopening it would only duplicate it.
    ConditionExpression: 'attribute_exists(pk) AND #s <> :pending',
    ExpressionAttributeNames: { '#s': 'status' },
    ExpressionAttributeValues: { ':pending': 'pending', ':now': now, ':null': null },
    ReturnValues: 'ALL_NEW',
  })).catch((err) => {
    if (isConditionFailure(err)) return undefined;
    throw err;
  });
  return out ? strip<Delivery>(out.Attributes!) : undefined;
}
