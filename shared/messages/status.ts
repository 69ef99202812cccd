/**
 * Delivery statuses from upstream webhooks. A message moves forward only — sent → delivered → read, and to
 * failed from sent or delivered — so webhooks arriving out of order or twice change nothing; each move is a
 * conditional update written with its event (`message.delivered`, `message.read`, `message.failed`).
 */
import { onMessageStatus } from '#shared/broadcasts/status.ts';
import { newEvent } from '#shared/events/outbox.ts';
import { commitWithRetry } from './transact.ts';
import { table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';
import type { EventName } from '#shared/events/names.ts';
import { toDeliveryError } from '#shared/upstream/error-codes.ts';
import { UpstreamError } from '#shared/upstream/client.ts';
import { findByWamid, getMessage, type MessageStatus } from './repository.ts';
import { eventData } from './events.ts';
import { webhookTime } from './inbound.ts';

export type StatusOutcome = 'applied' | 'ignored' | 'unknown';

/** The states a message may be in for each incoming status to apply. */
const FROM: Record<string, MessageStatus[]> = {
  sent: ['queued'],
  delivered: ['queued', 'sent'],
  read: ['queued', 'sent', 'delivered'],
  failed: ['queued', 'sent', 'delivered'],
};

const EVENT: Record<string, EventName | undefined> = {
  sent: 'message.sent',
  delivered: 'message.delivered',
  read: 'message.read',
  failed: 'message.failed',
};

/**
 * What the Cloud API said, unchanged: the status object (pricing, conversation, errors[].error_data...) as
 * `statuses`, like `message.received` carries `messages`; and the client's `biz_opaque_callback_data` of the send.
 */
const upstreamStatus = (status: Record<string, any>, payload: Record<string, unknown>) => {
  const opaque = status.biz_opaque_callback_data ?? payload?.biz_opaque_callback_data;
  return { statuses: [status], ...(opaque !== undefined ? { biz_opaque_callback_data: opaque } : {}) };
};

export async function applyStatus(businessId: string, status: Record<string, any>): Promise<StatusOutcome> {
  const next = String(status.status ?? '');
  const from = FROM[next];
  if (!from) return 'ignored';
  const pointer = await findByWamid(String(status.id ?? ''));
  if (!pointer) return 'unknown';
  if (pointer.businessId !== businessId) return 'ignored';
  const message = await getMessage(businessId, pointer.messageId);
  if (!message || message.direction !== 'outbound' || !from.includes(message.status)) return 'ignored';

  const at = webhookTime(status.timestamp);
  const now = new Date().toISOString();
  const sets = ['#status = :next', 'updatedAt = :now', `${next}At = :at`];
  const values: Record<string, unknown> = { ':next': next, ':now': now, ':at': at };
  // A read receipt implies delivery, even when the delivered webhook comes later (or never).
  if (next === 'read') sets.push('deliveredAt = if_not_exists(deliveredAt, :at)');
  let error: Record<string, unknown> | undefined;
  if (next === 'failed') {
    const e = (status.errors as Record<string, any>[] | undefined)?.[0];
    const code = Number(e?.code) || undefined;
    const mapped = toDeliveryError(new UpstreamError(String(e?.message ?? e?.title ?? 'Message failed'), 400, code, e?.error_data?.details, false));
    error = { code: mapped.code, error: mapped.error, message: mapped.message, ...(e?.title ? { title: e.title } : {}), ...(e?.error_data?.details ? { details: e.error_data.details } : {}) };
    sets.push('#error = :error');
    values[':error'] = error;
  }
  from.forEach((s, i) => (values[`:from${i}`] = s));
  const updated = { ...message, status: next as MessageStatus };
  try {
    await commitWithRetry(
      [{
        Update: {
          TableName: table(),
          Key: keys.message(businessId, message.id),
          UpdateExpression: `SET ${sets.join(', ')}`,
          ConditionExpression: `#status IN (${from.map((_, i) => `:from${i}`).join(', ')})`,
          ExpressionAttributeNames: { '#status': 'status', ...(error ? { '#error': 'error' } : {}) },
          ExpressionAttributeValues: values,
        },
      }],
      [newEvent(businessId, EVENT[next]!, eventData(updated, { [`${next}_at`]: at, ...(error ? { error } : {}), ...(message.sentBy ? { sent_by: message.sentBy } : {}), ...upstreamStatus(status, message.payload) }))],
    );
  } catch (err) {
    // Another delivery of a status moved the message first.
    if ((err as Error)?.name === 'TransactionCanceledException') return 'ignored';
    throw err;
  }
  // A broadcast's message: its delivered/read/failed counts follow (idempotent per recipient and status).
  if ((message as { broadcastId?: string }).broadcastId) {
    await onMessageStatus(businessId, message.id, next as 'delivered' | 'read' | 'failed', error as { code?: string; error?: string; message?: string } | undefined);
  }
  return 'applied';
}
