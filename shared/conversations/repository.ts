/**
 * Conversations: one open conversation per contact (pointer item `CCONV#{contactId}`), so that every message
 * to or from the same number lands in the same conversation and `conversationId` stays stable.
 *
 * The conversation item carries the 24-hour window (`lastInboundAt`), its assignment (`assignedAgentId`,
 * copied from the contact at creation; the agent's `assigned_conversations` counter moves in the same
 * transaction) and the AI settings the AI area reads and writes (`aiEnabled`, `aiMode`, `aiPausedUntil`).
 */
import { ownerPut } from '#shared/auth/ownership.ts';
import { randomUUID } from 'node:crypto';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { queryListPage } from '#shared/store/query.ts';
import { batchGetAll } from '#shared/store/batch.ts';
import { keys } from '#shared/store/keys.ts';
import { commit, newEvent, type DomainEvent, type TransactItem } from '#shared/events/outbox.ts';
import { getAgent } from '#shared/team/repository.ts';
import type { Contact } from '#shared/contacts/model.ts';
import { getContact } from '#shared/contacts/repository.ts';
import { isTransactionCancelled } from '#shared/store/transact.ts';
import { isConditionFailure as isSingleConditionFailure } from '#shared/store/conditional.ts';

export const WINDOW_MS = 24 * 3600 * 1000;

export interface Conversation {
  id: string;
  businessId: string;
  contactId: string;
  /** The customer's number; null for a customer known by username only (see Contact.whatsapp_user_id). */
  phoneNumber: string | null;
  status: 'open' | 'closed';
  closedAt?: string | null;
  assignedAgentId: string | null;
  aiEnabled: boolean;
  aiMode: string;
  aiPausedUntil: string | null;
  lastMessageAt: string | null;
  lastInboundAt: string | null;
  lastOutboundAt: string | null;
  createdAt: string;
  updatedAt: string;
}

const toConversation = (item: Record<string, any>): Conversation => ({
  id: item.id,
  businessId: item.businessId,
  contactId: item.contactId,
  phoneNumber: item.phoneNumber,
  status: item.status === 'closed' ? 'closed' : 'open',
  closedAt: item.closedAt ?? null,
  assignedAgentId: item.assignedAgentId ?? null,
  aiEnabled: item.aiEnabled !== false,
  aiMode: typeof item.aiMode === 'string' ? item.aiMode : 'auto',
  aiPausedUntil: typeof item.aiPausedUntil === 'string' ? item.aiPausedUntil : null,
  lastMessageAt: item.lastMessageAt ?? null,
  lastInboundAt: item.lastInboundAt ?? null,
  lastOutboundAt: item.lastOutboundAt ?? null,
  createdAt: item.createdAt,
  updatedAt: item.updatedAt,
});

/** The public view: the stored fields plus the 24-hour window they imply. */
export const conversationView = (c: Conversation, now = Date.now()) => {
  const { businessId: _bid, ...rest } = c;
  const windowExpiresAt = c.lastInboundAt ? new Date(Date.parse(c.lastInboundAt) + WINDOW_MS).toISOString() : null;
  return {
    ...rest,
    aiPausedUntil: c.aiPausedUntil && Date.parse(c.aiPausedUntil) > now ? c.aiPausedUntil : null,
    windowOpen: windowExpiresAt !== null && Date.parse(windowExpiresAt) > now,
    windowExpiresAt,
  };
};

export async function getConversation(businessId: string, id: string): Promise<Conversation | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: table(), Key: keys.conversation(businessId, id) }));
  return Item ? toConversation(Item) : undefined;
}

/**
 * The contact's open conversation, and the customer's last inbound message in their last closed one (the window a
 * new conversation starts with), in one request.
 */
async function conversationPointers(businessId: string, contactId: string): Promise<{ openId?: string; lastInboundAt: string | null; lastInboundPhone?: string | null }> {
  const wanted = [keys.openConversationOfContact(businessId, contactId), keys.closedConversationOfContact(businessId, contactId)];
  const items = await batchGetAll(wanted);
  const item = (sk: string) => items.find((it) => it.sk === sk);
  const closed = item(wanted[1].sk);
  return { openId: item(wanted[0].sk)?.conversationId as string | undefined, lastInboundAt: (closed?.lastInboundAt as string | undefined) ?? null, lastInboundPhone: closed?.phoneNumber as string | null | undefined };
}

const isConditionFailure = (err: unknown) => isTransactionCancelled(err) || isSingleConditionFailure(err);

/**
 * A conversation begun by a customer known by username only, once their contact has their number: it takes it, so
 * that it is answered (the AI, and every send, reach customers by number). Another writer that set it first wins.
 */
async function takeNumber(conversation: Conversation, phoneNumber: string): Promise<Conversation> {
  try {
    const { Attributes } = await db.send(new UpdateCommand({
      TableName: table(),
      Key: keys.conversation(conversation.businessId, conversation.id),
      UpdateExpression: 'SET phoneNumber = :phone',
      ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(phoneNumber) OR phoneNumber = :none)',
      ExpressionAttributeValues: { ':phone': phoneNumber, ':none': null },
      ReturnValues: 'ALL_NEW',
    }));
    return toConversation(Attributes!);
  } catch (err) {
    if (!isSingleConditionFailure(err)) throw err;
    return (await getConversation(conversation.businessId, conversation.id)) ?? conversation;
  }
}

/**
 * The contact's open conversation, created when there is none. Creation emits `conversation.created` (and
 * `conversation.assigned` when the contact has an agent) in the same transaction; a concurrent creator
 * loses the pointer race and reads the winner's conversation. A contact deleted meanwhile gets none: ContactGone.
 */
export async function findOrCreateConversation(businessId: string, contact: Contact): Promise<{ conversation: Conversation; created: boolean }> {
  let current = contact;
  for (let attempt = 0; attempt < 5; attempt++) {
    const pointers = await conversationPointers(businessId, contact.id);
    if (pointers.openId) {
      const existing = await getConversation(businessId, pointers.openId);
      if (existing) return { conversation: existing.phoneNumber || !current.phone_number ? existing : await takeNumber(existing, current.phone_number), created: false };
    }
    const now = new Date().toISOString();
    const agent = current.assigned_agent_id ? await getAgent(businessId, current.assigned_agent_id) : undefined;
    const conversation: Conversation = {
      id: randomUUID(),
      businessId,
      contactId: contact.id,
      phoneNumber: contact.phone_number,
      status: 'open',
      assignedAgentId: agent ? agent.id : null,
      aiEnabled: true,
      aiMode: 'auto',
      aiPausedUntil: null,
      lastMessageAt: null,
      // The window of the number the customer last wrote from (a pointer written before numbers were kept counts as this one).
      lastInboundAt: pointers.lastInboundPhone === undefined || pointers.lastInboundPhone === contact.phone_number ? pointers.lastInboundAt : null,
      lastOutboundAt: null,
      createdAt: now,
      updatedAt: now,
    };
    const items: TransactItem[] = [
      {
        Put: {
          TableName: table(),
          Item: { ...keys.openConversationOfContact(businessId, contact.id), type: 'openConversation', conversationId: conversation.id },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      {
        Put: {
          TableName: table(),
          Item: { ...keys.conversation(businessId, conversation.id), ...keys.conversationByRecency(businessId, now, conversation.id), type: 'conversation', ...conversation },
        },
      },
      ownerPut('conversation', conversation.id, businessId),
      // The agent copied is still the contact's: a reassignment that found no open conversation to move (it
      // committed between the contact's read and this write) cancels this creation, which reads the contact again.
      // And the contact is not deleted: a delete closes the conversations it finds, so one opened after it would stay.
      {
        ConditionCheck: {
          TableName: table(),
          Key: keys.contact(businessId, contact.id),
          ConditionExpression: `${current.assigned_agent_id
            ? 'assigned_agent_id = :agent'
            : '(attribute_not_exists(assigned_agent_id) OR attribute_type(assigned_agent_id, :null))'} AND (attribute_not_exists(deleted_at) OR attribute_type(deleted_at, :null))`,
          ExpressionAttributeValues: { ':null': 'NULL', ...(current.assigned_agent_id ? { ':agent': current.assigned_agent_id } : {}) },
        },
      },
    ];
    const events: DomainEvent[] = [
      newEvent(businessId, 'conversation.created', {
        conversation_id: conversation.id,
        contact_id: contact.id,
        phone_number: contact.phone_number,
        assigned_agent_id: conversation.assignedAgentId,
        created_at: now,
      }),
    ];
    if (agent) {
      items.push({
        Update: {
          TableName: table(),
          Key: keys.agent(businessId, agent.id),
          UpdateExpression: 'ADD assigned_conversations :one',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':one': 1 },
        },
      });
      events.push(newEvent(businessId, 'conversation.assigned', {
        conversation_id: conversation.id,
        contact_id: contact.id,
        agent_id: agent.id,
        previous_agent_id: null,
        assigned_at: now,
      }));
    }
    try {
      await commit(items, events);
      return { conversation, created: true };
    } catch (err) {
      if (!isConditionFailure(err)) throw err;
      // Another request created it first (or the contact's agent changed, or the agent vanished, or a transaction
      // conflicted): read again.
      await new Promise((r) => setTimeout(r, Math.random() * 20 * (attempt + 1)));
      const live = await getContact(businessId, contact.id);
      if (!live) throw new ContactGone(contact.id);
      current = live;
    }
  }
  throw new Error(`could not find or create the conversation of contact ${contact.id}`);
}

/** The contact a conversation was to be opened for was deleted meanwhile: its customer's contact is to be found again. */
export class ContactGone extends Error {
  constructor(contactId: string) {
    super(`contact ${contactId} was deleted`);
    this.name = 'ContactGone';
  }
}

export interface ConversationTouch {
  /** When the message happened (moves lastMessageAt and the recency order forward only). */
  at: string;
  direction: 'inbound' | 'outbound';
  /** AI control on send. */
  aiPausedUntil?: string;
  aiDisable?: boolean;
}

/** A time attribute not set yet (absent or null) or not later than `placeholder` (ISO times compare as strings; `:null` is 'NULL'). */
const notLaterThan = (attribute: string, placeholder: string) =>
  `(attribute_not_exists(${attribute}) OR attribute_type(${attribute}, :null) OR ${attribute} <= ${placeholder})`;

/** The conversation's part of a message transaction: recency, the 24-hour window, AI settings from the send. */
export function conversationTouch(current: Conversation, touch: ConversationTouch): TransactItem {
  const now = new Date().toISOString();
  const lastAt = current.lastMessageAt && current.lastMessageAt > touch.at ? current.lastMessageAt : touch.at;
  const sets = ['lastMessageAt = :lastAt', 'updatedAt = :now', 'gsi1sk = :gsi1sk'];
  const values: Record<string, unknown> = { ':lastAt': lastAt, ':now': now, ':gsi1sk': keys.conversationByRecency(current.businessId, lastAt, current.id).gsi1sk };
  if (touch.direction === 'inbound') {
    const lastInbound = current.lastInboundAt && current.lastInboundAt > touch.at ? current.lastInboundAt : touch.at;
    sets.push('lastInboundAt = :in');
    values[':in'] = lastInbound;
  } else {
    sets.push('lastOutboundAt = :out');
    values[':out'] = touch.at;
  }
  if (touch.aiPausedUntil) {
    sets.push('aiPausedUntil = :pause');
    values[':pause'] = touch.aiPausedUntil;
  }
  if (touch.direction !== 'inbound') return touchUpdate(current.businessId, current.id, touch, sets, values, 'attribute_exists(pk)');
  // A customer's message goes into a conversation that is still open: one closed since it was read fails this
  // condition, and the message opens the next conversation (shared/messages/inbound.ts). So does one a later message
  // touched since (messages of one customer stored side by side): the window and the recency never move back.
  values[':open'] = 'open';
  values[':null'] = 'NULL';
  return touchUpdate(current.businessId, current.id, touch, sets, values, [
    'attribute_exists(pk) AND (attribute_not_exists(#status) OR #status = :open)',
    notLaterThan('lastInboundAt', ':in'),
    notLaterThan('lastMessageAt', ':lastAt'),
  ].join(' AND '), { '#status': 'status' });
}

/**
 * The outbound touch of a send that did not read the conversation: what conversationTouch decides from the read
 * item becomes a condition instead (lastMessageAt not later than this message; a handoff pause only when it ends
 * later than the running one). A cancelled condition tells the caller to read the conversation and use
 * conversationTouch.
 */
export function unreadOutboundTouch(
  businessId: string,
  conversationId: string,
  touch: { at: string; aiPausedUntil?: string; aiDisable?: boolean; lengthenAiPauseTo?: string; openOnly?: boolean },
): TransactItem {
  const sets = ['lastMessageAt = :at', 'lastOutboundAt = :at', 'updatedAt = :now', 'gsi1sk = :gsi1sk'];
  const conditions = ['attribute_exists(pk)', notLaterThan('lastMessageAt', ':at')];
  // A conversation closed meanwhile is not touched (the caller reads it, finds it closed, and leaves it as it is).
  if (touch.openOnly) conditions.push('#status = :open');
  const values: Record<string, unknown> = {
    ':at': touch.at,
    ':now': new Date().toISOString(),
    ':gsi1sk': keys.conversationByRecency(businessId, touch.at, conversationId).gsi1sk,
    ':null': 'NULL',
  };
  const pause = touch.aiPausedUntil ?? touch.lengthenAiPauseTo;
  if (pause) {
    sets.push('aiPausedUntil = :pause');
    values[':pause'] = pause;
    if (!touch.aiPausedUntil) conditions.push('(attribute_not_exists(aiPausedUntil) OR attribute_type(aiPausedUntil, :null) OR aiPausedUntil < :pause)');
  }
  if (touch.openOnly) values[':open'] = 'open';
  return touchUpdate(businessId, conversationId, touch, sets, values, conditions.join(' AND '), touch.openOnly ? { '#status': 'status' } : undefined);
}

/** The update item of a touch, read or unread; a send that turns the AI off does so the same way in both. */
function touchUpdate(
  businessId: string, conversationId: string, touch: { aiDisable?: boolean }, sets: string[], values: Record<string, unknown>, condition: string,
  names?: Record<string, string>,
): TransactItem {
  if (touch.aiDisable) {
    sets.push('aiEnabled = :false');
    values[':false'] = false;
  }
  return {
    Update: {
      TableName: table(),
      Key: keys.conversation(businessId, conversationId),
      UpdateExpression: `SET ${sets.join(', ')}`,
      ConditionExpression: condition,
      ExpressionAttributeValues: values,
      ...(names ? { ExpressionAttributeNames: names } : {}),
    },
  };
}

/** The place of a conversation touch in a transaction, for a conversation that is not to be touched (closed meanwhile). */
export const untouched = (businessId: string, conversationId: string): TransactItem => ({
  ConditionCheck: { TableName: table(), Key: keys.conversation(businessId, conversationId), ConditionExpression: 'attribute_exists(pk)' },
});

/** Conversations of a business, most recent activity first. */
export async function listConversations(businessId: string, limit: number, startKey?: Record<string, unknown>) {
  const { items, lastKey } = await queryListPage(
    { IndexName: 'gsi1', KeyConditionExpression: 'gsi1pk = :pk', ExpressionAttributeValues: { ':pk': keys.conversationsByRecencyPk(businessId) }, ScanIndexForward: false },
    { limit, startKey },
  );
  return { conversations: items.map(toConversation), lastKey };
}
