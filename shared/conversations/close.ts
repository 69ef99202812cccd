/**
 * Closing a conversation: it stops being the contact's open conversation (the next message opens a new one),
 * its agent's `assigned_conversations` drops by one, and `conversation.closed` is emitted, all in one
 * transaction. Closing a closed conversation changes nothing and emits nothing.
 */
import { missingRecord } from '#shared/auth/ownership.ts';
import { commit, newEvent, type TransactItem } from '#shared/events/outbox.ts';
import { notFound } from '#shared/http/errors.ts';
import { table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';
import { getConversation, type Conversation } from './repository.ts';
import { isTransactionCancelled } from '#shared/store/transact.ts';
import { batchGetAll } from '#shared/store/batch.ts';
import { logger } from '#shared/log/logger.ts';

/** Reads and tries again while messages and assignments keep moving the conversation. */
const CLOSE_ATTEMPTS = 5;

export async function closeConversation(businessId: string, id: string): Promise<Conversation> {
  for (let attempt = 0; attempt < CLOSE_ATTEMPTS; attempt++) {
    const current = await getConversation(businessId, id);
    if (!current) throw await missingRecord('conversation', id, businessId, notFound('Conversation not found'));
    if (current.status === 'closed') return current;
    const now = new Date().toISOString();
    const items: TransactItem[] = [
      {
        Update: {
          TableName: table(),
          Key: keys.conversation(businessId, id),
          UpdateExpression: 'SET #status = :closed, closedAt = :now, updatedAt = :now',
          // The window carried over below and the agent whose count drops are the ones read: an inbound message or an
          // assignment meanwhile makes the close read again (else the count of an agent assigned meanwhile never drops).
          ConditionExpression: `attribute_exists(pk) AND (attribute_not_exists(#status) OR #status = :open) AND ${
            current.lastInboundAt ? 'lastInboundAt = :seen' : '(attribute_not_exists(lastInboundAt) OR attribute_type(lastInboundAt, :nullType))'} AND ${
            current.assignedAgentId ? 'assignedAgentId = :agent' : '(attribute_not_exists(assignedAgentId) OR attribute_type(assignedAgentId, :nullType))'}`,
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':closed': 'closed', ':open': 'open', ':now': now,
            ...(current.lastInboundAt ? { ':seen': current.lastInboundAt } : {}),
            ...(current.assignedAgentId ? { ':agent': current.assignedAgentId } : {}),
            ...(!current.lastInboundAt || !current.assignedAgentId ? { ':nullType': 'NULL' } : {}),
          },
        },
      },
      {
        // Only if it still points here (it is replaced only once removed).
        Delete: {
          TableName: table(),
          Key: keys.openConversationOfContact(businessId, current.contactId),
          ConditionExpression: 'attribute_not_exists(pk) OR conversationId = :id',
          ExpressionAttributeValues: { ':id': id },
        },
      },
    ];
    // The 24-hour window is the customer's number's, not the conversation's: the next conversation with that number
    // starts with it (one with a number the contact was given since does not).
    if (current.lastInboundAt) {
      items.push({
        Put: {
          TableName: table(),
          Item: { ...keys.closedConversationOfContact(businessId, current.contactId), type: 'closedConversation', conversationId: id, lastInboundAt: current.lastInboundAt, phoneNumber: current.phoneNumber },
        },
      });
    }
    if (current.assignedAgentId) {
      items.push({
        Update: {
          TableName: table(),
          Key: keys.agent(businessId, current.assignedAgentId),
          UpdateExpression: 'ADD assigned_conversations :minusOne',
          ConditionExpression: 'attribute_exists(pk) AND assigned_conversations > :zero',
          ExpressionAttributeValues: { ':minusOne': -1, ':zero': 0 },
        },
      });
    }
    const event = newEvent(businessId, 'conversation.closed', {
      conversation_id: id,
      contact_id: current.contactId,
      phone_number: current.phoneNumber,
      assigned_agent_id: current.assignedAgentId,
      closed_at: now,
    });
    try {
      await commit(items, [event]);
      return { ...current, status: 'closed', closedAt: now, updatedAt: now };
    } catch (err) {
      // A concurrent close, message or reassignment moved first: read again and decide again.
      if (!isTransactionCancelled(err)) throw err;
      await new Promise((r) => setTimeout(r, Math.random() * 10 * 2 ** attempt));
    }
  }
  throw new Error(`could not close conversation ${id}`);
}

/**
 * Closes the open conversations of contacts deleted or given another number: a deleted contact has no active
 * conversation (its agent's count drops, `conversation.closed` is emitted), and its number's next message opens a new
 * one rather than a second open conversation beside it; a renumbered contact's next conversation is with its new
 * number. A close that fails is logged and leaves that conversation open: the change has happened.
 */
export async function closeConversationsOf(businessId: string, contactIds: string[]): Promise<void> {
  if (contactIds.length === 0) return;
  const pointers = await batchGetAll(contactIds.map((id) => keys.openConversationOfContact(businessId, id)));
  await Promise.all(pointers.map((p) => closeConversation(businessId, String(p.conversationId)).catch((err) => {
    logger.error('the open conversation of a deleted or renumbered contact could not be closed', { businessId, conversationId: p.conversationId, error: err as Error });
  })));
}
