/**
 * Ordering lanes: one small item per pending delivery that has an ordering key (pk B#{bid}#EVK#{key},
 * sk L#{webhookId}#{eventSk}), beside the key's outbox items. A lane's first item is the only delivery
 * of that subscription and key that may be sent; a delivery names the one behind it to wake it.
 */
import { DeleteCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { applied } from '#shared/store/conditional.ts';
import { keys } from '#shared/store/keys.ts';
import type { Delivery } from './model.ts';

export const laneItem = (d: Delivery) => ({
  ...keys.deliveryLane(d.businessId, d.webhookId, d.laneKey!, d.laneSk!),
  type: 'lane',
  webhookId: d.webhookId,
  laneSk: d.laneSk,
  deliveryId: d.id,
  nextAttemptAt: d.nextAttemptAt,
});

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

/** Gives a pending delivery its lane item (a lone delivery whose first attempt failed). */
export async function joinLane(d: Delivery): Promise<void> {
  if (!d.laneKey || !d.laneSk) return;
  await db.send(new PutCommand({ TableName: table(), Item: laneItem(d) }));
}

/** Moves a still-pending delivery's next attempt time onto its lane item (a redelivered one has none: nothing to do). */
export async function setLaneNextAttempt(d: Pick<Delivery, 'businessId' | 'webhookId' | 'laneKey' | 'laneSk'>, nextAttemptAt: string): Promise<void> {
  if (!d.laneKey || !d.laneSk) return;
  await applied(db.send(new UpdateCommand({
    TableName: table(),
    Key: keys.deliveryLane(d.businessId, d.webhookId, d.laneKey, d.laneSk),
    UpdateExpression: 'SET nextAttemptAt = :n',
    ConditionExpression: 'attribute_exists(pk)',
    ExpressionAttributeValues: { ':n': nextAttemptAt },
  })));
}
