/**
 * Agent assignment through the contact. A contact's `assigned_agent_id` is copied onto its open conversation
 * (the messaging area copies it onto future ones when it opens them). The conversation's `assignedAgentId`
 * and both agents' `assigned_conversations` counters change in the caller's transaction, so the team list's
 * counts stay exact.
 *
 * Events: conversation.assigned `{ conversation_id, contact_id, agent_id, previous_agent_id, assigned_at }`,
 * conversation.unassigned `{ conversation_id, contact_id, agent_id: null, previous_agent_id, unassigned_at }`.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';
import { newEvent, type DomainEvent, type TransactItem } from '#shared/events/outbox.ts';
import { getAgent } from '#shared/team/repository.ts';
import { validationError } from '#shared/http/errors.ts';

/** 400 unless the agent belongs to the business. */
export async function assertAgentOfBusiness(bid: string, agentId: string, field = 'assigned_agent_id'): Promise<void> {
  if (!(await getAgent(bid, agentId))) {
    throw validationError({ [field]: ['No team agent with this id in your business'] }, 'Unknown assigned_agent_id');
  }
}

const agentCounter = (bid: string, agentId: string, delta: number): TransactItem => ({
  Update: {
    TableName: table(),
    Key: keys.agent(bid, agentId),
    UpdateExpression: 'ADD assigned_conversations :d',
    ConditionExpression: 'attribute_exists(pk)',
    ExpressionAttributeValues: { ':d': delta },
  },
});

/** The open conversation of a contact, if any: its id and current agent. */
export async function openConversationOf(bid: string, contactId: string): Promise<{ id: string; agentId: string | null } | undefined> {
  const pointer = await db.send(new GetCommand({ TableName: table(), Key: keys.openConversationOfContact(bid, contactId), ConsistentRead: true }));
  const conversationId = pointer.Item?.conversationId as string | undefined;
  if (!conversationId) return undefined;
  const conv = await db.send(new GetCommand({ TableName: table(), Key: keys.conversation(bid, conversationId), ConsistentRead: true }));
  if (!conv.Item) return undefined;
  return { id: conversationId, agentId: (conv.Item.assignedAgentId as string | undefined) ?? null };
}

/**
 * The items and events that hand the contact's open conversation to `agentId` (null: unassign). Every item
 * is conditioned on what was read, so a concurrent change cancels the caller's transaction and it retries.
 */
export async function assignmentChange(bid: string, contactId: string, agentId: string | null): Promise<{ items: TransactItem[]; events: DomainEvent[] }> {
  const conv = await openConversationOf(bid, contactId);
  if (!conv) {
    // A conversation opened meanwhile would copy the old agent: make that race cancel the caller's transaction.
    return {
      items: [{ ConditionCheck: { TableName: table(), Key: keys.openConversationOfContact(bid, contactId), ConditionExpression: 'attribute_not_exists(pk)' } }],
      events: [],
    };
  }
  if (conv.agentId === agentId) return { items: [], events: [] };
  const at = new Date().toISOString();
  const items: TransactItem[] = [
    {
      ConditionCheck: {
        TableName: table(),
        Key: keys.openConversationOfContact(bid, contactId),
        ConditionExpression: 'conversationId = :c',
        ExpressionAttributeValues: { ':c': conv.id },
      },
    },
    {
      Update: {
        TableName: table(),
        Key: keys.conversation(bid, conv.id),
        UpdateExpression: agentId ? 'SET assignedAgentId = :a' : 'REMOVE assignedAgentId',
        ConditionExpression: conv.agentId ? 'assignedAgentId = :prev' : 'attribute_not_exists(assignedAgentId) OR attribute_type(assignedAgentId, :null)',
        ExpressionAttributeValues: {
          ...(agentId ? { ':a': agentId } : {}),
          ...(conv.agentId ? { ':prev': conv.agentId } : { ':null': 'NULL' }),
        },
      },
    },
  ];
  if (conv.agentId) items.push(agentCounter(bid, conv.agentId, -1));
  if (agentId) items.push(agentCounter(bid, agentId, 1));
  const events = agentId
    ? [newEvent(bid, 'conversation.assigned', { conversation_id: conv.id, contact_id: contactId, agent_id: agentId, previous_agent_id: conv.agentId, assigned_at: at })]
    : [newEvent(bid, 'conversation.unassigned', { conversation_id: conv.id, contact_id: contactId, agent_id: null, previous_agent_id: conv.agentId, unassigned_at: at })];
  return { items, events };
}
