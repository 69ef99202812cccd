/**
 * Table access of the webhook area: subscriptions (pk B#{bid}, sk WH#{id}), their deliveries
 * (pk B#{bid}#WH#{id}, sk D#{deliveryId}; gsi1 by time for the deliveries list) and the ordering lanes
 * (one small item per pending delivery that has an ordering key).
 */
import { BatchGetCommand, type BatchGetCommandOutput, DeleteCommand, GetCommand, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';
import { queryPrefix } from '#shared/store/query.ts';
import type { TransactItem } from '#shared/events/outbox.ts';
import type { Attempt, Delivery, DeliveryStatus, Subscription } from './model.ts';

const KEY_ATTRS = ['pk', 'sk', 'gsi1pk', 'gsi1sk', 'type', 'ttl'];
const strip = <T>(item: Record<string, unknown>): T => {
  const out = { ...item };
  for (const k of KEY_ATTRS) delete out[k];
  return out as T;
};

const isConditionFailure = (err: unknown) => (err as Error)?.name === 'ConditionalCheckFailedException';
const isCancelledByCondition = (err: unknown) =>
  (err as Error)?.name === 'TransactionCanceledException' &&
  ((err as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? []).some((r) => r.Code === 'ConditionalCheckFailed');

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

export async function listSubscriptions(bid: string): Promise<Subscription[]> {
  const { pk, skPrefix } = keys.webhookPrefix(bid);
  const items = (await queryPrefix(pk, skPrefix)).map((item) => strip<Subscription>(item));
  return items.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
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
    if (isCancelledByCondition(err)) return false;
    throw err;
  }
}

/** Remembers when a run of failures started (first failure only). */
export async function markFailing(bid: string, id: string, since: string): Promise<void> {
  await db.send(new UpdateCommand({
    TableName: table(),
    Key: keys.webhook(bid, id),
    UpdateExpression: 'SET failingSince = :s',
    ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(failingSince) OR failingSince = :null)',
    ExpressionAttributeValues: { ':s': since, ':null': null },
  })).catch((err) => {
    if (!isConditionFailure(err)) throw err;
  });
}

export async function clearFailing(bid: string, id: string): Promise<void> {
  await db.send(new UpdateCommand({
    TableName: table(),
    Key: keys.webhook(bid, id),
    UpdateExpression: 'SET failingSince = :null',
    ConditionExpression: 'attribute_exists(pk)',
    ExpressionAttributeValues: { ':null': null },
  })).catch((err) => {
    if (!isConditionFailure(err)) throw err;
  });
}

// ---- deliveries ----

/** Delivery history is kept 30 days (well past the ~3 days of retries), then expires through the table's TTL. */
const DELIVERY_RETENTION_SECONDS = 30 * 86_400;

const deliveryItem = (d: Delivery) => ({
  ...keys.delivery(d.businessId, d.webhookId, d.id),
  ...keys.deliveryByTime(d.businessId, d.webhookId, d.createdAt, d.id),
  type: 'delivery',
  ttl: Math.floor(Date.parse(d.createdAt) / 1000) + DELIVERY_RETENTION_SECONDS,
  ...d,
});

/**
 * Creates a delivery and, when it has an ordering key, its lane item, atomically and only once: a
 * second fan-out of the same event (sweep, duplicate message) changes nothing. False when it existed.
 */
export async function createDelivery(d: Delivery): Promise<boolean> {
  const put: TransactItem = { Put: { TableName: table(), Item: deliveryItem(d), ConditionExpression: 'attribute_not_exists(pk)' } };
  try {
    if (d.laneKey && d.laneSk) {
      await db.send(new TransactWriteCommand({
        TransactItems: [put, { Put: { TableName: table(), Item: { ...keys.deliveryLane(d.businessId, d.webhookId, d.laneKey, d.laneSk), type: 'lane', deliveryId: d.id, nextAttemptAt: d.nextAttemptAt } } }],
      }));
    } else {
      await db.send(new PutCommand(put.Put as never));
    }
    return true;
  } catch (err) {
    if (isConditionFailure(err) || isCancelledByCondition(err)) return false;
    throw err;
  }
}

export async function getDelivery(bid: string, webhookId: string, id: string): Promise<Delivery | undefined> {
  const out = await db.send(new GetCommand({ TableName: table(), Key: keys.delivery(bid, webhookId, id), ConsistentRead: true }));
  return out.Item ? strip<Delivery>(out.Item) : undefined;
}

export async function listDeliveries(bid: string, webhookId: string, limit: number, start?: Record<string, unknown>) {
  const out = await db.send(new QueryCommand({
    TableName: table(),
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.deliveriesByTimePk(bid, webhookId) },
    ScanIndexForward: false,
    Limit: limit,
    ExclusiveStartKey: start,
  }));
  return { items: (out.Items ?? []).map((i) => strip<Delivery>(i)), last: out.LastEvaluatedKey };
}

export interface LaneEntry {
  sk: string;
  deliveryId: string;
  nextAttemptAt: string;
}

/** The first two deliveries of a lane: the head (the only one that may be sent) and the one behind it. */
export async function laneFront(bid: string, webhookId: string, laneKey: string): Promise<LaneEntry[]> {
  const out = await db.send(new QueryCommand({
    TableName: table(),
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.deliveryLanePk(bid, webhookId, laneKey) },
    ConsistentRead: true,
    Limit: 2,
  }));
  return (out.Items ?? []).map((item) => ({ sk: item.sk as string, deliveryId: item.deliveryId as string, nextAttemptAt: item.nextAttemptAt as string }));
}

/** Subscriptions by key in one round trip (the delivery worker reads those of a whole batch at once). */
export async function getSubscriptions(refs: { businessId: string; webhookId: string }[]): Promise<Map<string, Subscription>> {
  const found = new Map<string, Subscription>();
  const unique = [...new Map(refs.map((r) => [`${r.businessId}/${r.webhookId}`, r])).values()];
  for (let i = 0; i < unique.length; i += 100) {
    let request: Record<string, any> | undefined = {
      [table()]: { Keys: unique.slice(i, i + 100).map((r) => keys.webhook(r.businessId, r.webhookId)), ConsistentRead: true },
    };
    for (let tries = 0; request && Object.keys(request).length > 0 && tries < 5; tries++) {
      const out: BatchGetCommandOutput = await db.send(new BatchGetCommand({ RequestItems: request }));
      for (const item of out.Responses?.[table()] ?? []) {
        const s = strip<Subscription>(item);
        found.set(`${s.businessId}/${s.id}`, s);
      }
      request = out.UnprocessedKeys;
    }
  }
  return found;
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
 * Records an attempt (or a give-up without one) and releases the lease; a delivery that is done leaves
 * its lane in the same transaction, so the next delivery of the lane can go.
 */
export async function recordOutcome(d: Delivery, outcome: Outcome): Promise<void> {
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
  const update: TransactItem = {
    Update: {
      TableName: table(),
      Key: keys.delivery(d.businessId, d.webhookId, d.id),
      UpdateExpression: `SET ${sets.join(', ')} REMOVE leaseUntil`,
      ExpressionAttributeNames: { '#s': 'status' },
      ExpressionAttributeValues: values,
    },
  };
  const items: TransactItem[] = [update];
  if (d.laneKey && d.laneSk) {
    const laneKey = keys.deliveryLane(d.businessId, d.webhookId, d.laneKey, d.laneSk);
    items.push(outcome.status === 'pending'
      ? { Update: { TableName: table(), Key: laneKey, UpdateExpression: 'SET nextAttemptAt = :n', ConditionExpression: 'attribute_exists(pk)', ExpressionAttributeValues: { ':n': outcome.nextAttemptAt ?? now } } }
      : { Delete: { TableName: table(), Key: laneKey } });
  }
  try {
    if (items.length === 1) await db.send(new UpdateCommand(update.Update as never));
    else await db.send(new TransactWriteCommand({ TransactItems: items }));
  } catch (err) {
    // A redelivered delivery has no lane item any more: record the attempt alone.
    if (!isCancelledByCondition(err)) throw err;
    await db.send(new UpdateCommand(update.Update as never));
  }
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
