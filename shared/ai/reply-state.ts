/**
 * The AI worker's own items: the newest inbound message of each conversation (debounce: only the newest one
 * is answered) and one reply marker per inbound message (never two replies to the same inbound, even when
 * the queue delivers its job twice).
 *
 * A marker is first a claim (`pending`, with a lease shorter than the queue's visibility timeout), then
 * `replied`, `skipped` or `failed`. A delivery that fails before replying releases its claim so the queue's
 * retry can take it (naming the reply it stored failed, if the upstream was unavailable, for the retry to send
 * that one again); one that dies without releasing leaves a claim that expires with its lease.
 */
import { DeleteCommand, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { applied, isConditionFailure } from '#shared/store/conditional.ts';
import { keys } from '#shared/store/keys.ts';
import { aiConfig } from './config.ts';

const MARKER_TTL_SECONDS = 14 * 24 * 3600;

/**
 * Records `messageId` as the newest inbound of the conversation unless a later one is already recorded: later by when
 * it came in (`receivedAt`, when the service stored it), then by id (UUIDv7, in the order of storing), the order the
 * model's history has. Not by Meta's timestamp: a message Meta delivers late or twice must not supersede one that came
 * in after it, which the history cut at it would then leave out. Returns false when a later message superseded it
 * (its own job will answer).
 */
export async function markNewestInbound(businessId: string, conversationId: string, messageId: string, receivedAt: string): Promise<boolean> {
  return applied(db.send(new UpdateCommand({
    TableName: table(),
    Key: keys.aiConversation(businessId, conversationId),
    UpdateExpression: 'SET #type = :type, latestMessageId = :m, latestAt = :r',
    ConditionExpression: 'attribute_not_exists(latestAt) OR latestAt < :r OR (latestAt = :r AND latestMessageId <= :m)',
    ExpressionAttributeNames: { '#type': 'type' },
    ExpressionAttributeValues: { ':type': 'aiConversation', ':m': messageId, ':r': receivedAt },
  })));
}

export async function latestInbound(businessId: string, conversationId: string): Promise<string | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: table(), Key: keys.aiConversation(businessId, conversationId), ConsistentRead: true }));
  return Item?.latestMessageId as string | undefined;
}

export interface Claim {
  messageId: string;
  claimedAt: string;
  /** The reply an earlier delivery stored failed, to be sent again. */
  failedReplyId?: string;
}

/**
 * Takes the right to answer `messageId`; undefined when it was answered already or another delivery holds it. A claim
 * taken again after an earlier delivery's reply was stored failed by an unavailable upstream names that reply
 * (`failedReplyId`): it is sent again, not a new one written.
 */
export async function claimReply(businessId: string, conversationId: string, messageId: string, now: Date): Promise<Claim | undefined> {
  const claimedAt = now.toISOString();
  const leaseCutoff = new Date(now.getTime() - aiConfig.claimLeaseSeconds * 1000).toISOString();
  try {
    const { Attributes } = await db.send(new UpdateCommand({
      TableName: table(),
      Key: keys.aiReply(businessId, messageId),
      UpdateExpression: 'SET #type = :type, conversationId = :c, messageId = :m, #status = :pending, claimedAt = :at, #ttl = :ttl',
      ConditionExpression: 'attribute_not_exists(pk) OR (#status = :pending AND claimedAt < :cutoff)',
      ExpressionAttributeNames: { '#type': 'type', '#status': 'status', '#ttl': 'ttl' },
      ExpressionAttributeValues: {
        ':type': 'aiReply', ':c': conversationId, ':m': messageId, ':pending': 'pending', ':at': claimedAt, ':cutoff': leaseCutoff,
        ':ttl': Math.floor(now.getTime() / 1000) + MARKER_TTL_SECONDS,
      },
      ReturnValues: 'ALL_NEW',
    }));
    return { messageId, claimedAt, ...(Attributes?.failedReplyId ? { failedReplyId: String(Attributes.failedReplyId) } : {}) };
  } catch (err) {
    if (isConditionFailure(err)) return undefined;
    throw err;
  }
}

/**
 * Gives the claim back so that a retry may answer (only if it is still ours). With `failedReplyId`, the reply this
 * delivery stored failed (the upstream unavailable) stays named, and the claim is free at once for the retry to send it.
 */
export async function releaseClaim(businessId: string, claim: Claim, failedReplyId?: string): Promise<void> {
  const mine = { ConditionExpression: '#status = :pending AND claimedAt = :c', ExpressionAttributeNames: { '#status': 'status' } };
  if (!failedReplyId) {
    await applied(db.send(new DeleteCommand({ TableName: table(), Key: keys.aiReply(businessId, claim.messageId), ...mine, ExpressionAttributeValues: { ':pending': 'pending', ':c': claim.claimedAt } })));
    return;
  }
  await applied(db.send(new UpdateCommand({
    TableName: table(),
    Key: keys.aiReply(businessId, claim.messageId),
    UpdateExpression: 'SET failedReplyId = :f, claimedAt = :released',
    ...mine,
    ExpressionAttributeValues: { ':pending': 'pending', ':c': claim.claimedAt, ':f': failedReplyId, ':released': '' },
  })));
}

export type ClaimOutcome = 'replied' | 'skipped' | 'failed';

/** Settles the claim for good: this inbound message is never answered again. */
export async function settleClaim(businessId: string, claim: Claim, outcome: ClaimOutcome, details: Record<string, unknown> = {}): Promise<void> {
  await db.send(new UpdateCommand({
    TableName: table(),
    Key: keys.aiReply(businessId, claim.messageId),
    UpdateExpression: 'SET #status = :s, settledAt = :at, details = :d',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: { ':s': outcome, ':at': new Date().toISOString(), ':d': details },
  }));
}

export async function replyMarker(businessId: string, messageId: string): Promise<Record<string, unknown> | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: table(), Key: keys.aiReply(businessId, messageId), ConsistentRead: true }));
  return Item;
}
