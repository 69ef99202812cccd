/**
 * The messages a send points at, a reaction's and a reply's (`context`): `message_id` may be the service message
 * id or the upstream wamid, and goes upstream as the wamid. A reaction target the service knows must be in the
 * same chat and at most 30 days old; a wamid the service does not know goes to the upstream as given (it may
 * predate the service). A UUID that names no message of the business is refused in service style (a mistyped service
 * id); in upstream style it goes to the upstream as given, as any id the service does not know (the Cloud API's
 * clients send ids of their own there: netflie's tests reply to a UUID).
 */
import { UUID_RE } from '#shared/http/schemas.ts';
import { validationError } from '#shared/http/errors.ts';
import { findByWamid, getMessage, type Message } from './repository.ts';
import type { TransactItem } from '#shared/events/outbox.ts';
import { table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';

export const REACTION_MAX_AGE_MS = 30 * 24 * 3600 * 1000;

/** One active reaction per message: the newest replaces the previous one; an empty emoji removes it. */
export const reactionUpdate = (businessId: string, to: { messageId: string; emoji: string }, reactionMessageId: string, at: string): TransactItem => ({
  Update: {
    TableName: table(),
    Key: keys.message(businessId, to.messageId),
    ...(to.emoji === ''
      ? { UpdateExpression: 'REMOVE reaction' }
      : { UpdateExpression: 'SET reaction = :r', ExpressionAttributeValues: { ':r': { emoji: to.emoji, messageId: reactionMessageId, reactedAt: at } } }),
  },
});

/** The message a sent reaction replaces the reaction of, when the service knows it (a retry of the reaction applies it). */
export async function reactedMessage(businessId: string, reaction: Message): Promise<{ messageId: string; emoji: string } | undefined> {
  const sent = reaction.payload.reaction as { message_id?: unknown; emoji?: unknown } | undefined;
  if (typeof sent?.message_id !== 'string' || typeof sent.emoji !== 'string') return undefined;
  const pointer = await findByWamid(businessId, sent.message_id);
  return pointer ? { messageId: pointer.messageId, emoji: sent.emoji } : undefined;
}

export interface ReactionTarget {
  wamid: string;
  /** The service message reacted to, when the service knows it. */
  messageId?: string;
}

export async function resolveReactionTarget(businessId: string, to: string, messageId: string, upstreamStyle: boolean, now = Date.now()): Promise<ReactionTarget> {
  let target: Message | undefined;
  if (UUID_RE.test(messageId)) {
    target = await getMessage(businessId, messageId);
    if (!target && !upstreamStyle) throw validationError({ 'reaction.message_id': ['no message with this id in this business'] }, 'The message to react to does not exist');
  } else {
    const pointer = await findByWamid(businessId, messageId);
    if (pointer) target = await getMessage(businessId, pointer.messageId);
  }
  if (!target) return { wamid: messageId };
  if (!target.wamid) throw validationError({ 'reaction.message_id': ['the message was never delivered upstream (it has no wamid)'] }, 'The message to react to was not sent');
  if ((target.phoneNumber ?? '').replace(/\D/g, '') !== to.replace(/\D/g, '')) {
    throw validationError({ 'reaction.message_id': ['the message belongs to another chat: reactions are 1:1, in the chat of the recipient'] }, 'The message to react to is in another chat');
  }
  const at = Date.parse(target.receivedAt ?? target.createdAt);
  if (now - at > REACTION_MAX_AGE_MS) {
    throw validationError({ 'reaction.message_id': ['only messages from the last 30 days can be reacted to'] }, 'The message to react to is older than 30 days');
  }
  return { wamid: target.wamid, messageId: target.id };
}

/** A reply's `context.message_id`: the wamid of a service message id (which must have been sent), else as given. */
export async function resolveReplyTarget(businessId: string, messageId: string, upstreamStyle: boolean): Promise<string> {
  if (!UUID_RE.test(messageId)) return messageId;
  const target = await getMessage(businessId, messageId);
  if (!target && upstreamStyle) return messageId;
  if (!target) throw validationError({ 'context.message_id': ['no message with this id in this business'] }, 'The message replied to does not exist');
  if (!target.wamid) throw validationError({ 'context.message_id': ['the message was never delivered upstream (it has no wamid)'] }, 'The message replied to was not sent');
  return target.wamid;
}
