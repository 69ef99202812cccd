/**
 * Leases on deliveries: a worker takes a pending delivery for one send (a conditional write), so that
 * duplicate queue messages never send the same delivery twice at once.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { isConditionFailure } from '#shared/store/conditional.ts';
import { keys } from '#shared/store/keys.ts';
import type { Delivery } from './model.ts';
import { getDelivery } from './delivery-store.ts';
import { fromTableItem } from './table-item.ts';

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
    return { claimed: true, delivery: fromTableItem<Delivery>(out.Attributes!) };
  } catch (err) {
    if (!isConditionFailure(err)) throw err;
    return { claimed: false, delivery: await getDelivery(ref.businessId, ref.webhookId, ref.deliveryId) };
  }
}

/** Gives the lease back without an attempt (the delivery turned out to be waiting in its lane). */
export async function releaseDelivery(d: Delivery): Promise<void> {
  await db.send(new UpdateCommand({ TableName: table(), Key: keys.delivery(d.businessId, d.webhookId, d.id), UpdateExpression: 'REMOVE leaseUntil' }));
}
