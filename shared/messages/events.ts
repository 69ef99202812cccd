/** The common `data` of the message events (snake_case, like the contract's other event payloads). */
import type { Message } from './repository.ts';

export const eventData = (m: Message, extra: Record<string, unknown> = {}) => ({
  message_id: m.id,
  wamid: m.wamid,
  conversation_id: m.conversationId,
  contact_id: m.contactId,
  phone_number: m.phoneNumber,
  direction: m.direction,
  type: m.messageType,
  status: m.status,
  ...(m.broadcastId ? { broadcast_id: m.broadcastId } : {}),
  ...extra,
});

/**
 * The client's own `biz_opaque_callback_data` of a send, which comes back in each status event of the message
 * (the value the service passes when the client set none, the message id, is not the client's).
 */
export const clientCallbackData = (m: Pick<Message, 'id' | 'payload'>, upstreamValue?: unknown): { biz_opaque_callback_data?: unknown } => {
  const value = upstreamValue ?? m.payload?.biz_opaque_callback_data;
  return value !== undefined && value !== m.id ? { biz_opaque_callback_data: value } : {};
};
