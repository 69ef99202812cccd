/**
 * Delivery statuses of broadcast messages. The messaging area calls `onMessageStatus` for every status
 * webhook of an outbound message; messages that no broadcast sent are ignored (one index read).
 * Each recipient moves forward only (sent → delivered → read; sent → failed), conditionally on the state it was
 * read in, so that a repeated or out-of-order webhook never counts twice; the recipient and the broadcast's
 * counters move in one transaction, which also counts the status change for the completion tally (counts.ts).
 * `delivered` counts messages delivered or read; `read` those read.
 */
import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { cancelledByCondition } from '#shared/store/transact.ts';
import { recipientByMessage, recipientKey } from './recipients.ts';
import { countsUpdate, type CountDelta } from './counts.ts';

export type MessageStatus = 'sent' | 'delivered' | 'read' | 'failed';
type Failure = { code?: string | number; error?: string; message?: string };

/** A recipient as it stands: its state and how far its delivery got. */
interface Seen { state?: string; delivery_status?: string }

/** What `status` does to a recipient seen as `r`: its update (conditioned on exactly that) and the counters' delta; nothing if it is not a step forward. */
function step(r: Seen, status: Exclude<MessageStatus, 'sent'>, at: string, failure?: Failure) {
  if (r.state !== 'sent') return undefined;
  const was = r.delivery_status;
  const seenAs = {
    ConditionExpression: `#state = :sent AND ${was ? 'delivery_status = :was' : 'attribute_not_exists(delivery_status)'}`,
    names: { '#state': 'state' } as Record<string, string>,
    values: { ':sent': 'sent', ...(was ? { ':was': was } : {}) } as Record<string, unknown>,
  };
  if (status === 'delivered') {
    if (was) return undefined;
    return { ...seenAs, set: 'SET delivery_status = :d, delivered_at = :at', more: { ':d': 'delivered', ':at': at }, delta: { delivered: 1 } as CountDelta };
  }
  if (status === 'read') {
    if (was === 'read') return undefined;
    // Read implies delivered: a read that skipped the delivered webhook counts as both.
    return { ...seenAs, set: 'SET delivery_status = :r, read_at = :at, delivered_at = if_not_exists(delivered_at, :at)', more: { ':r': 'read', ':at': at }, delta: { read: 1, delivered: was ? 0 : 1 } as CountDelta };
  }
  const code = failure?.code === undefined ? undefined : String(failure.code);
  return {
    ...seenAs,
    names: { ...seenAs.names, '#error': 'error' },
    set: 'SET #state = :failed, #error = :err, failed_at = :at REMOVE delivery_status',
    more: { ':failed': 'failed', ':at': at, ':err': { error: failure?.error ?? 'message_delivery_failed', ...(code ? { code } : {}), message: failure?.message ?? 'The message could not be delivered' } },
    delta: { sent: -1, failed: 1, delivered: was ? -1 : 0, read: was === 'read' ? -1 : 0 } as CountDelta,
  };
}

/** Attempts against a recipient that keeps changing under us (each re-reads it). */
const TRIES = 5;

/**
 * Records a status of a message a broadcast sent. Returns true when it changed a recipient.
 * `failure` carries the upstream code of an asynchronous failure.
 */
export async function onMessageStatus(businessId: string, messageId: string, status: MessageStatus, failure?: Failure): Promise<boolean> {
  if (status === 'sent') return false;
  const found = await recipientByMessage(businessId, messageId);
  if (!found) return false;
  const Key = recipientKey(businessId, found.broadcast_id, found.contact_id);
  for (let attempt = 1; ; attempt++) {
    const { Item } = await db.send(new GetCommand({ TableName: table(), Key, ProjectionExpression: '#state, delivery_status', ExpressionAttributeNames: { '#state': 'state' }, ConsistentRead: true }));
    const s = step((Item ?? {}) as Seen, status, new Date().toISOString(), failure);
    if (!s) return false;
    try {
      await db.send(new TransactWriteCommand({
        TransactItems: [
          { Update: { TableName: table(), Key, UpdateExpression: s.set, ConditionExpression: s.ConditionExpression, ExpressionAttributeNames: s.names, ExpressionAttributeValues: { ...s.values, ...s.more } } },
          { Update: countsUpdate(businessId, found.broadcast_id, s.delta, { statusChange: true }) },
        ],
      }));
      return true;
    } catch (err) {
      // The recipient moved between the read and the write (another status of the same message): read it again.
      if (!cancelledByCondition(err) || attempt >= TRIES) throw err;
    }
  }
}

/**
 * A failed message of a broadcast, retried and sent (POST /messages/v1/{id}/retry): its recipient is sent again, with the
 * new wamid, and the counters move with it (failed - 1, sent + 1), so the broadcast says what its messages' events say.
 * Only from failed (a repeat changes nothing). Returns true when it changed a recipient.
 */
export async function onMessageRetried(businessId: string, messageId: string, wamid: string, at: string): Promise<boolean> {
  const found = await recipientByMessage(businessId, messageId);
  if (!found) return false;
  try {
    await db.send(new TransactWriteCommand({
      TransactItems: [
        {
          Update: {
            TableName: table(),
            Key: recipientKey(businessId, found.broadcast_id, found.contact_id),
            UpdateExpression: 'SET #state = :sent, wamid = :wamid, sent_at = :at REMOVE #error, failed_at, delivery_status, delivered_at, read_at',
            ConditionExpression: '#state = :failed',
            ExpressionAttributeNames: { '#state': 'state', '#error': 'error' },
            ExpressionAttributeValues: { ':sent': 'sent', ':failed': 'failed', ':wamid': wamid, ':at': at },
          },
        },
        { Update: countsUpdate(businessId, found.broadcast_id, { failed: -1, sent: 1 }, { statusChange: true }) },
      ],
    }));
    return true;
  } catch (err) {
    if (cancelledByCondition(err)) return false;
    throw err;
  }
}
