/**
 * Delivery statuses from upstream webhooks. A message moves forward only — sent → delivered → read, and to
 * failed only before it was delivered (a delivered or read receipt proves the customer's device has it, so a
 * later failed status must not make it retryable, and a retry send it twice) — so webhooks arriving out of
 * order or twice change nothing; each move is a
 * conditional update written with its event (`message.delivered`, `message.read`, `message.failed`).
 *
 * A status for a wamid the service does not know yet may belong to a send whose answer was lost after the
 * upstream accepted it: its `biz_opaque_callback_data` is then the message id the send passed, and the message
 * is settled as sent with this wamid (and `message.sent`) before the status itself applies. That holds for a send
 * stored failed too (the upstream did not answer in time, but had taken the message): it is sent after all, so a
 * retry does not send it twice.
 */
import { onMessageRetried, onMessageStatus } from '#shared/broadcasts/status.ts';
import { newEvent } from '#shared/events/outbox.ts';
import { commitWithRetry } from './transact.ts';
import { table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';
import type { EventName } from '#shared/events/names.ts';
import { toDeliveryError } from '#shared/upstream/error-codes.ts';
import { templateContext } from '#shared/templates/error-context.ts';
import { UpstreamError } from '#shared/upstream/client.ts';
import { getConversation, conversationTouch } from '#shared/conversations/repository.ts';
import { UUID_RE } from '#shared/http/schemas.ts';
import { findByWamid, getMessage, type Message, type MessageStatus } from './repository.ts';
import { clientCallbackData, eventData } from './events.ts';
import { webhookTime } from './inbound.ts';
import { settleSent } from './send-state.ts';
import { isTransactionCancelled } from '#shared/store/transact.ts';

export type StatusOutcome = 'applied' | 'ignored' | 'unknown';

/**
 * The states a message may be in for each incoming status to apply. Maps, because the status is the sender's
 * text: on a plain object `constructor` or `__proto__` would find Object.prototype's members.
 */
const FROM = new Map<string, MessageStatus[]>([
  ['sent', ['queued']],
  ['delivered', ['queued', 'sent']],
  ['read', ['queued', 'sent', 'delivered']],
  ['failed', ['queued', 'sent']],
]);

const EVENT = new Map<string, EventName>([
  ['sent', 'message.sent'],
  ['delivered', 'message.delivered'],
  ['read', 'message.read'],
  ['failed', 'message.failed'],
]);

/**
 * What the Cloud API said, unchanged: the status object (pricing, conversation, errors[].error_data...) as
 * `statuses`, like `message.received` carries `messages`; and the client's `biz_opaque_callback_data` of the send,
 * beside it and in the status object, where the service's own message id (passed when the client set none) is left out.
 */
const upstreamStatus = (status: Record<string, any>, message: Message) => {
  const { biz_opaque_callback_data: passed, ...rest } = status;
  const client = clientCallbackData(message, passed);
  return { statuses: [{ ...rest, ...client }], ...client };
};

/** How often a status is re-read and applied again when another status of the message moved it meanwhile. */
const APPLY_ATTEMPTS = 5;

export async function applyStatus(businessId: string, status: Record<string, any>): Promise<StatusOutcome> {
  const next = String(status.status ?? '');
  const from = FROM.get(next);
  if (!from) return 'ignored';
  const pointer = (await findByWamid(businessId, String(status.id ?? ''))) ?? (await settleLostAnswer(businessId, status));
  if (!pointer) return 'unknown';
  for (let attempt = 1; attempt <= APPLY_ATTEMPTS; attempt++) {
    const message = await getMessage(businessId, pointer.messageId);
    if (!message || message.direction !== 'outbound' || !from.includes(message.status)) return 'ignored';
    // A status of an earlier attempt (the wamid of a send that failed, then was retried) says nothing of this one.
    if (message.wamid !== String(status.id)) return 'ignored';
    // A retry under way keeps the failed attempt's wamid until it settles: that attempt's statuses change nothing.
    if (message.sendAttempt !== undefined) return 'ignored';
    const error = next === 'failed' ? deliveryError(status, message) : undefined;
    if (await moveStatus(businessId, message, next as MessageStatus, status, error)) {
      // A broadcast's message: its delivered/read/failed counts follow (idempotent per recipient and status).
      if (message.broadcastId) {
        await onMessageStatus(businessId, message.id, next as 'delivered' | 'read' | 'failed', error as { code?: string; error?: string; message?: string } | undefined);
      }
      return 'applied';
    }
    // Another status of the message moved it first: read it again, and apply this one if it still moves it.
  }
  throw new Error(`status ${next} of message ${pointer.messageId}: the message kept moving under ${APPLY_ATTEMPTS} attempts`);
}

/** The delivery error a failed status carries, in the contract's shape (Meta's title and details kept). */
function deliveryError(status: Record<string, any>, message: Message): Record<string, unknown> {
  const e = (status.errors as Record<string, any>[] | undefined)?.[0];
  const code = Number(e?.code) || undefined;
  const mapped = code === undefined
    // Meta's schema makes `errors` optional: without a code there is none to report (not the HTTP status of a call).
    ? { code: 'unknown', error: 'upstream_error', message: String(e?.message ?? e?.title ?? 'The upstream platform reported the message as failed, without an error code') }
    : toDeliveryError(new UpstreamError(String(e?.message ?? e?.title ?? 'Message failed'), 400, code, e?.error_data?.details, false), { ...templateContext(message.payload ?? {}), messageId: message.id });
  // `details` is an object whatever the code, as a send's 132000 has it: Meta's own words under `upstream`.
  const details = 'details' in mapped && mapped.details ? mapped.details : e?.error_data?.details ? { upstream: e.error_data.details } : undefined;
  return { code: mapped.code, error: mapped.error, message: mapped.message, ...(e?.title ? { title: e.title } : {}), ...(details ? { details } : {}) };
}

/**
 * Moves `message` from the status it was read in to `next`, with its event, conditioned on that status being
 * still the message's: false when another status moved it first. So each move's event is made after the move
 * before it committed, and the events of one message reach subscribers in the order of its moves (an event's id
 * orders it in the outbox). A read receipt implies delivery: a message read before its delivered status applied
 * gets `message.delivered` too, just before `message.read` and in the same commit, so every message read has had
 * both events whichever of Meta's two webhooks came first (the late delivered one then changes nothing).
 */
async function moveStatus(businessId: string, message: Message, next: MessageStatus, status: Record<string, any>, error: Record<string, unknown> | undefined): Promise<boolean> {
  const at = webhookTime(status.timestamp);
  const sets = ['#status = :next', 'updatedAt = :now', `${next}At = :at`];
  const values: Record<string, unknown> = { ':next': next, ':now': new Date().toISOString(), ':at': at, ':wamid': message.wamid, ':seen': message.status };
  const impliesDelivery = next === 'read' && message.status !== 'delivered';
  if (impliesDelivery) sets.push('deliveredAt = if_not_exists(deliveredAt, :at)');
  if (error) {
    sets.push('#error = :error');
    values[':error'] = error;
  }
  // Each event carries the status object it stands for: the delivery a read receipt implies carries the receipt as
  // a delivered one (same id, recipient and time), so that a receiver reading `statuses[0].status` sees its event.
  const event = (name: MessageStatus, extra: Record<string, unknown>) => newEvent(businessId, EVENT.get(name)!, eventData({ ...message, status: name }, {
    ...extra, ...(message.sentBy ? { sent_by: message.sentBy } : {}), ...upstreamStatus(name === next ? status : { ...status, status: name }, message),
  }));
  const events = [
    ...(impliesDelivery ? [event('delivered', { delivered_at: at })] : []),
    event(next, { [`${next}_at`]: at, ...(error ? { error } : {}) }),
  ];
  try {
    await commitWithRetry(
      [{
        Update: {
          TableName: table(),
          Key: keys.message(businessId, message.id),
          UpdateExpression: `SET ${sets.join(', ')}`,
          // The status it was read in, the same attempt still: its wamid, and no retry under way (a retry's attempt
          // keeps the old wamid until it settles).
          ConditionExpression: '#status = :seen AND wamid = :wamid AND attribute_not_exists(sendAttempt)',
          ExpressionAttributeNames: { '#status': 'status', ...(error ? { '#error': 'error' } : {}) },
          ExpressionAttributeValues: values,
        },
      }],
      events,
    );
    return true;
  } catch (err) {
    if (isTransactionCancelled(err)) return false;
    throw err;
  }
}

/**
 * The send of a queued message named by the status's `biz_opaque_callback_data` (the id the send passed when
 * the client set none) is settled as sent with the status's wamid; so is that of a failed message that never had a
 * wamid, while no retry of it is under way. Checked against what the send stored, so that a client's own callback
 * value never settles another message.
 */
async function settleLostAnswer(businessId: string, status: Record<string, any>): Promise<{ messageId: string } | undefined> {
  const callback = status.biz_opaque_callback_data;
  const wamid = String(status.id ?? '');
  if (typeof callback !== 'string' || !UUID_RE.test(callback) || !wamid) return undefined;
  const message = await getMessage(businessId, callback);
  if (!message || message.direction !== 'outbound') return undefined;
  const unanswered = message.status === 'failed' && !message.wamid && message.sendAttempt === undefined;
  if (message.status !== 'queued' && !unanswered) return undefined;
  if (message.payload.biz_opaque_callback_data !== callback || message.id !== callback) return undefined;
  if (status.recipient_id !== undefined && String(status.recipient_id).replace(/\D/g, '') !== message.waId) return undefined;
  const conversation = await getConversation(businessId, message.conversationId);
  const at = webhookTime(status.timestamp);
  const settled = await settleSent({
    message,
    at,
    wamid,
    waId: message.waId,
    items: conversation ? [conversationTouch(conversation, { at, direction: 'outbound' })] : [],
    ...(unanswered ? { from: 'failed' as const } : {}),
  });
  // A broadcast's recipient failed with its message: sent with it now, as after a retry.
  if (settled && unanswered && message.broadcastId) await onMessageRetried(businessId, message.id, wamid, at);
  // Settled now, or by the send's own answer meanwhile: either way the wamid pointer tells.
  return findByWamid(businessId, wamid);
}
