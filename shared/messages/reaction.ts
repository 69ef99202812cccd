/**
 * Reaction targets: `message_id` may be the service message id or the upstream wamid. A target the service
 * knows must be in the same chat and at most 30 days old; one the service does not know goes to the upstream
 * as given (it may predate the service).
 */
import { UUID_RE } from '#shared/http/schemas.ts';
import { validationError } from '#shared/http/errors.ts';
import { findByWamid, getMessage, type Message } from './repository.ts';

export const REACTION_MAX_AGE_MS = 30 * 24 * 3600 * 1000;

export interface ReactionTarget {
  wamid: string;
  /** The service message reacted to, when the service knows it. */
  messageId?: string;
}

export async function resolveReactionTarget(businessId: string, to: string, messageId: string, now = Date.now()): Promise<ReactionTarget> {
  let target: Message | undefined;
  if (UUID_RE.test(messageId)) {
    target = await getMessage(businessId, messageId);
    if (!target) throw validationError({ 'reaction.message_id': ['no message with this id in this business'] }, 'The message to react to does not exist');
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
