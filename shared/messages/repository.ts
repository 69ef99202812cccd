/**
 * Message items: `MSG#{id}` under the business, listed per conversation through gsi1 (time order), and a
 * wamid pointer per business so that upstream webhooks (which name the number and the wamid) find their
 * message and duplicate inbound deliveries are recognised. Per business, not global: the same upstream
 * message posted to two businesses' numbers (a published sample, a test) is each one's own.
 */
import { ownerPut } from '#shared/auth/ownership.ts';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { batchGetAll } from '#shared/store/batch.ts';
import { db, table } from '#shared/store/client.ts';
import { queryListPage } from '#shared/store/query.ts';
import { keys } from '#shared/store/keys.ts';
import type { TransactItem } from '#shared/events/outbox.ts';
import type { MessageType } from './schemas.ts';

export type MessageStatus = 'queued' | 'sent' | 'delivered' | 'read' | 'failed' | 'received';
export type SentBy = 'api' | 'ai' | 'broadcast';

export interface MessageError {
  code: string;
  error: string;
  message: string;
  details?: unknown;
}

/** A send's `ai` object (the contract's "AI control on send"). */
export interface SendAiControl {
  pause?: boolean;
  pauseDuration?: number;
  disable?: boolean;
}

export interface Message {
  id: string;
  businessId: string;
  conversationId: string;
  contactId: string;
  direction: 'outbound' | 'inbound';
  messageType: MessageType | string;
  status: MessageStatus;
  wamid: string | null;
  /** The other party, E.164; null for an inbound message from a customer known by username only. */
  phoneNumber: string | null;
  waId: string | null;
  /** The type object (text, image, template...) as sent or received: `payload[messageType]`, derived on read, never stored. */
  content?: unknown;
  /** Outbound: the exact upstream payload, reused by retry. Inbound: the upstream message object. Stored once. */
  payload: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  sentBy?: SentBy;
  /** The broadcast that sent it, if one did: every event of the message names it. */
  broadcastId?: string;
  /** Outbound media: the send's `autoConvert`, which a retry applies again (shared/messages/retry.ts). */
  autoConvert?: boolean;
  /** Outbound: the send's AI control, which a retry that sends applies (shared/messages/retry.ts). */
  ai?: SendAiControl;
  error?: MessageError | null;
  createdAt: string;
  updatedAt: string;
  sentAt?: string | null;
  deliveredAt?: string | null;
  readAt?: string | null;
  failedAt?: string | null;
  retriedAt?: string | null;
  receivedAt?: string | null;
  retryCount?: number;
  /** While an upstream call of this message is in flight: its attempt id (shared/messages/send-state.ts). */
  sendAttempt?: string;
  /** Inbound: when the business sent its read receipt (shared/messages/read-receipt.ts). */
  markedReadAt?: string | null;
  /** Inbound: when the business last showed the typing indicator in answer to it. */
  typingShownAt?: string | null;
  /** The business's current reaction to this message (set by a reaction send, removed by an empty emoji). */
  reaction?: { emoji: string; messageId: string; reactedAt: string };
}

/** The message item; `content` is left out (it is the payload's type object, derived on read). */
export const messagePut = (m: Message, condition?: Pick<TransactPut, 'ConditionExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'> | string): TransactItem => {
  const { content: _derived, ...stored } = m;
  return {
    Put: {
      TableName: table(),
      Item: { ...keys.message(m.businessId, m.id), ...keys.messageInConversation(m.businessId, m.conversationId, m.createdAt, m.id), type: 'message', ...stored },
      ...(typeof condition === 'string' ? { ConditionExpression: condition } : condition ?? {}),
    },
  };
};

type TransactPut = NonNullable<TransactItem['Put']>;

/** Who owns a new message id (tells another account's id, 403, from an unknown one, 404). Idempotent. */
export const messageOwnerPut = (m: Pick<Message, 'id' | 'businessId'>): TransactItem => ownerPut('message', m.id, m.businessId);

/** The wamid pointer; the condition makes a second delivery of the same upstream message fail the transaction. */
export const wamidPut = (wamid: string, businessId: string, messageId: string): TransactItem => ({
  Put: {
    TableName: table(),
    Item: { ...keys.wamid(businessId, wamid), type: 'wamid', businessId, messageId },
    ConditionExpression: 'attribute_not_exists(pk)',
  },
});

export const toMessage = (item: Record<string, any>): Message => {
  const { pk: _pk, sk: _sk, gsi1pk: _g1, gsi1sk: _g2, type: _t, ...rest } = item;
  // Items written before the payload was stored once still carry their own `content`.
  return { ...rest, content: rest.content ?? rest.payload?.[rest.messageType] ?? null } as Message;
};

export async function getMessage(businessId: string, id: string): Promise<Message | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: table(), Key: keys.message(businessId, id), ConsistentRead: true }));
  return Item ? toMessage(Item) : undefined;
}

/** The business's message with this wamid (its pointer, or the global one of an older table if it names this business). */
export async function findByWamid(businessId: string, wamid: string): Promise<{ messageId: string } | undefined> {
  const own = keys.wamid(businessId, wamid);
  const items = await batchGetAll([own, keys.legacyWamid(wamid)]);
  const item = items.find((i) => i.pk === own.pk) ?? items.find((i) => i.businessId === businessId);
  return item ? { messageId: item.messageId } : undefined;
}

/** Messages of a conversation, newest first. */
export async function listMessages(businessId: string, conversationId: string, limit: number, startKey?: Record<string, unknown>) {
  const { items, lastKey } = await queryListPage(
    { IndexName: 'gsi1', KeyConditionExpression: 'gsi1pk = :pk', ExpressionAttributeValues: { ':pk': keys.messagesOfConversationPk(businessId, conversationId) }, ScanIndexForward: false },
    { limit, startKey },
  );
  return { messages: items.map(toMessage), lastKey };
}

/** The public view of a message (no tenancy or storage fields). */
export const messageView = (m: Message) => {
  const { businessId: _bid, payload, sendAttempt: _attempt, autoConvert: _autoConvert, ai: _ai, ...rest } = m;
  // A reply names the message it answers: Meta's `context` of an inbound reply ({ from, id }), or the one sent upstream.
  const context = payload?.context;
  return context && typeof context === 'object' ? { ...rest, context } : rest;
};
