/**
 * The sending port: one personalised template request through the messaging service (the same path as
 * `POST /messages/v1`, so every message is stored, counted and emits its own message events).
 *
 * Each recipient's send carries the idempotency key `broadcast:{broadcastId}:{contactId}`: when a worker dies
 * between sending and recording, the next attempt gets the first outcome back instead of a second message.
 */
import { sendMessage } from '#shared/messages/send.ts';

export interface Sent {
  messageId: string | null;
  wamid: string | null;
}

export async function sendTemplate(businessId: string, broadcastId: string, contactId: string, request: Record<string, unknown>): Promise<Sent> {
  const res = await sendMessage(businessId, request, { sentBy: 'broadcast', broadcastId, idempotencyKey: `broadcast:${broadcastId}:${contactId}` });
  return { messageId: res.data?.id ?? res.messages?.[0]?.id ?? null, wamid: res.messages?.[0]?.wamid ?? null };
}
