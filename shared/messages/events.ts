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
  ...extra,
});
