/** Conversation and message items as the conversations and messages areas store them. */
import { randomUUID } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';
import { messagePut, type Message } from '#shared/messages/repository.ts';

export async function putConversation(businessId: string, fields: Record<string, unknown> = {}): Promise<string> {
  const id = randomUUID();
  const now = new Date().toISOString();
  await db.send(new PutCommand({
    TableName: table(),
    Item: {
      ...keys.conversation(businessId, id),
      type: 'conversation',
      id,
      businessId,
      contactId: randomUUID(),
      phoneNumber: `+1555${Math.floor(1_000_000 + Math.random() * 8_999_999)}`,
      status: 'open',
      assignedAgentId: null,
      aiEnabled: true,
      aiMode: 'auto',
      aiPausedUntil: null,
      createdAt: now,
      updatedAt: now,
      ...fields,
    },
  }));
  return id;
}

let clockMs = Date.now();
/** Strictly increasing timestamps, so message order is the order of the calls. */
const tick = () => new Date((clockMs = Math.max(clockMs + 1, Date.now()))).toISOString();

export async function putMessage(businessId: string, conversationId: string, direction: 'inbound' | 'outbound', text: string, extra: Partial<Message> = {}): Promise<Message> {
  const at = tick();
  const m: Message = {
    id: randomUUID(),
    businessId,
    conversationId,
    contactId: randomUUID(),
    direction,
    messageType: 'text',
    status: direction === 'inbound' ? 'received' : 'sent',
    wamid: `wamid.${randomUUID()}`,
    phoneNumber: '+15550000000',
    waId: '15550000000',
    content: { body: text },
    payload: direction === 'inbound' ? { type: 'text', text: { body: text } } : { messaging_product: 'whatsapp', type: 'text', text: { body: text } },
    sentBy: direction === 'outbound' ? 'api' : undefined,
    createdAt: at,
    updatedAt: at,
    receivedAt: direction === 'inbound' ? at : null,
    ...extra,
  };
  await db.send(new PutCommand(messagePut(m).Put as any));
  return m;
}
