/**
 * The AI fields of the conversation item (`keys.conversation`, owned by the conversations area):
 * `aiEnabled` (default true), `aiMode` (default `auto`) and `aiPausedUntil` (ISO 8601 or null).
 * Only these attributes are read or written here, always on an existing conversation of the business.
 */
import { missingRecord } from '#shared/auth/ownership.ts';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { isConditionFailure } from '#shared/store/conditional.ts';
import { keys } from '#shared/store/keys.ts';
import { notFound } from '#shared/http/errors.ts';

/** The modes the agent supports. `auto`: the AI answers inbound messages by itself when the precedence allows. */
export const AI_MODES = ['auto'] as const;
export type AiMode = (typeof AI_MODES)[number];

export interface ConversationAiSettings {
  aiEnabled: boolean;
  aiMode: AiMode;
  aiPausedUntil: string | null;
}

const fromItem = (item: Record<string, unknown>): ConversationAiSettings => ({
  aiEnabled: item.aiEnabled !== false,
  aiMode: (AI_MODES as readonly unknown[]).includes(item.aiMode) ? (item.aiMode as AiMode) : 'auto',
  aiPausedUntil: typeof item.aiPausedUntil === 'string' ? item.aiPausedUntil : null,
});

const conversationNotFound = () => notFound('Conversation not found');

/** The conversation's AI settings and whether it is closed, or undefined when the business has no such conversation. */
export async function getConversationAi(businessId: string, conversationId: string): Promise<(ConversationAiSettings & { closed: boolean }) | undefined> {
  const { Item } = await db.send(new GetCommand({
    TableName: table(),
    Key: keys.conversation(businessId, conversationId),
    ProjectionExpression: 'pk, aiEnabled, aiMode, aiPausedUntil, #status',
    ExpressionAttributeNames: { '#status': 'status' },
  }));
  return Item ? { ...fromItem(Item), closed: Item.status === 'closed' } : undefined;
}

/** Sets AI fields on an existing conversation; a missing conversation is a 404. */
async function setFields(businessId: string, conversationId: string, fields: Partial<ConversationAiSettings>, condition?: { expression: string; values: Record<string, unknown> }): Promise<ConversationAiSettings | undefined> {
  const entries = Object.entries(fields).filter(([, v]) => v !== undefined);
  try {
    const { Attributes } = await db.send(new UpdateCommand({
      TableName: table(),
      Key: keys.conversation(businessId, conversationId),
      UpdateExpression: `SET ${entries.map(([k]) => `#${k} = :${k}`).join(', ')}`,
      ConditionExpression: `attribute_exists(pk)${condition ? ` AND (${condition.expression})` : ''}`,
      ExpressionAttributeNames: Object.fromEntries(entries.map(([k]) => [`#${k}`, k])),
      ExpressionAttributeValues: { ...Object.fromEntries(entries.map(([k, v]) => [`:${k}`, v])), ...condition?.values },
      ReturnValues: 'ALL_NEW',
    }));
    return fromItem(Attributes ?? {});
  } catch (err) {
    if (isConditionFailure(err)) {
      if (!condition) throw await missingRecord('conversation', conversationId, businessId, conversationNotFound());
      return undefined;
    }
    throw err;
  }
}

/** The permanent on/off of the conversation (PATCH /conversations/v1/{id}/ai, `ai.disable` on send). */
export const setConversationAiEnabled = (businessId: string, conversationId: string, aiEnabled: boolean, aiMode?: AiMode) =>
  setFields(businessId, conversationId, { aiEnabled, aiMode }) as Promise<ConversationAiSettings>;

/** A timed pause that replaces any current one (the pause endpoint, `ai.pause` on send). */
export const pauseConversationAi = (businessId: string, conversationId: string, until: string) =>
  setFields(businessId, conversationId, { aiPausedUntil: until }) as Promise<ConversationAiSettings>;

/**
 * A pause that only ever lengthens the current one (handoff after a human reply), so that a longer pause set
 * on purpose is not cut short. ISO 8601 strings from toISOString compare in time order.
 */
export async function extendConversationAiPause(businessId: string, conversationId: string, until: string): Promise<void> {
  const exists = await getConversationAi(businessId, conversationId);
  if (!exists) throw await missingRecord('conversation', conversationId, businessId, conversationNotFound());
  await setFields(businessId, conversationId, { aiPausedUntil: until }, {
    expression: 'attribute_not_exists(aiPausedUntil) OR attribute_type(aiPausedUntil, :nullType) OR aiPausedUntil < :aiPausedUntil',
    values: { ':nullType': 'NULL' },
  });
}
