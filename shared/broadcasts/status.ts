/**
 * Delivery statuses of broadcast messages. The messaging area calls `onMessageStatus` for every status
 * webhook of an outbound message; messages that no broadcast sent are ignored (one index read).
 * Each recipient moves forward only (sent → delivered → read; sent → failed), conditionally, so that a repeated
 * or out-of-order webhook never counts twice. `delivered` counts messages delivered or read; `read` those read.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { isConditionFailure } from '#shared/store/conditional.ts';
import { addCounts } from './counts.ts';
import { recipientByMessage, recipientKey } from './recipients.ts';

export type MessageStatus = 'sent' | 'delivered' | 'read' | 'failed';

async function update(input: Omit<ConstructorParameters<typeof UpdateCommand>[0], 'TableName'>): Promise<Record<string, any> | undefined | false> {
  try {
    const { Attributes } = await db.send(new UpdateCommand({ TableName: table(), ...input }));
    return Attributes;
  } catch (err) {
    if (isConditionFailure(err)) return false;
    throw err;
  }
}

/**
 * Records a status of a message a broadcast sent. Returns true when it changed a recipient.
 * `failure` carries the upstream code of an asynchronous failure.
 */
export async function onMessageStatus(
  businessId: string, messageId: string, status: MessageStatus, failure?: { code?: string | number; error?: string; message?: string },
): Promise<boolean> {
  if (status === 'sent') return false;
  const r = await recipientByMessage(businessId, messageId);
  if (!r) return false;
  const Key = recipientKey(businessId, r.broadcast_id, r.contact_id);
  const at = new Date().toISOString();
  if (status === 'delivered') {
    const done = await update({
      Key,
      UpdateExpression: 'SET delivery_status = :d, delivered_at = :at',
      ConditionExpression: '#state = :sent AND attribute_not_exists(delivery_status)',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: { ':d': 'delivered', ':at': at, ':sent': 'sent' },
    });
    if (done === false) return false;
    await addCounts(businessId, r.broadcast_id, { delivered: 1 });
    return true;
  }
  if (status === 'read') {
    const old = await update({
      Key,
      UpdateExpression: 'SET delivery_status = :r, read_at = :at, delivered_at = if_not_exists(delivered_at, :at)',
      ConditionExpression: '#state = :sent AND (attribute_not_exists(delivery_status) OR delivery_status = :d)',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: { ':r': 'read', ':d': 'delivered', ':at': at, ':sent': 'sent' },
      ReturnValues: 'ALL_OLD',
    });
    if (old === false) return false;
    // Read implies delivered: a read that skipped the delivered webhook counts as both.
    await addCounts(businessId, r.broadcast_id, { read: 1, delivered: old?.delivery_status ? 0 : 1 });
    return true;
  }
  const code = failure?.code === undefined ? undefined : String(failure.code);
  const old = await update({
    Key,
    UpdateExpression: 'SET #state = :failed, #error = :err, failed_at = :at REMOVE delivery_status',
    ConditionExpression: '#state = :sent',
    ExpressionAttributeNames: { '#state': 'state', '#error': 'error' },
    ExpressionAttributeValues: {
      ':failed': 'failed',
      ':sent': 'sent',
      ':at': at,
      ':err': { error: failure?.error ?? 'message_delivery_failed', ...(code ? { code } : {}), message: failure?.message ?? 'The message could not be delivered' },
    },
    ReturnValues: 'ALL_OLD',
  });
  if (old === false) return false;
  const wasDelivered = old?.delivery_status ? 1 : 0;
  const wasRead = old?.delivery_status === 'read' ? 1 : 0;
  await addCounts(businessId, r.broadcast_id, { sent: -1, failed: 1, delivered: -wasDelivered, read: -wasRead });
  return true;
}
