/**
 * The sending port: one personalised template request through the messaging service (the same path as
 * `POST /messages/v1`, so every message is stored, counted and emits its own message events).
 *
 * Each recipient's send carries the idempotency key `broadcast:{broadcastId}:{contactId}`: when a worker dies
 * between sending and recording, the next attempt gets the first outcome back instead of a second message. Each is
 * recorded under the condition that the broadcast has not been cancelled (its stop marker, written by the cancel). A
 * recipient whose send the upstream throttled keeps its failed message, which its next turn retries.
 */
import { sendMessage } from '#shared/messages/send.ts';
import { retryMessage } from '#shared/messages/retry.ts';
import type { Recipient } from './model.ts';
import { table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';

/** The broadcast was cancelled before this recipient's message was recorded: nothing was sent. */
export class BroadcastStopped extends Error {
  constructor(readonly broadcastId: string) {
    super(`broadcast ${broadcastId} was cancelled before this message was recorded`);
    this.name = 'BroadcastStopped';
  }
}

export interface Sent {
  messageId: string | null;
  wamid: string | null;
}

/** A broadcast's sends are recorded (and so sent) only while it has no stop marker: a cancel's answer stops every send after it. */
const notStopped = (businessId: string, broadcastId: string) => ({
  items: [{ ConditionCheck: { TableName: table(), Key: keys.broadcastStop(businessId, broadcastId), ConditionExpression: 'attribute_not_exists(pk)' } }],
  refused: () => new BroadcastStopped(broadcastId),
});

/**
 * The recipient's template to `request.to`. Its key names the number when the contact has another one than the frozen
 * audience's: a throttled try to the old number holds the plain key.
 */
export async function sendTemplate(businessId: string, broadcastId: string, recipient: Pick<Recipient, 'contact_id' | 'phone_number'>, request: Record<string, unknown>): Promise<Sent> {
  const key = `broadcast:${broadcastId}:${recipient.contact_id}`;
  const res = await sendMessage(businessId, request, {
    sentBy: 'broadcast',
    broadcastId,
    idempotencyKey: request.to === recipient.phone_number ? key : `${key}:${String(request.to)}`,
    recordIf: notStopped(businessId, broadcastId),
  });
  return { messageId: res.data?.id ?? res.messages?.[0]?.id ?? null, wamid: res.messages?.[0]?.wamid ?? null };
}

/**
 * Sends again the recipient's message that the upstream's throttling failed (the same message: its key would only
 * answer that failure again), as `POST /messages/v1/{id}/retry` does, while the broadcast is not cancelled.
 */
export async function retryTemplate(businessId: string, broadcastId: string, messageId: string): Promise<Sent> {
  const res = await retryMessage(businessId, messageId, undefined, { claimIf: notStopped(businessId, broadcastId) });
  return { messageId: res.data.id, wamid: res.data.messageId };
}
