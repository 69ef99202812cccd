/**
 * `POST /messages/v1/{id}/retry`: a failed message is sent again with its stored recipient, type, content and
 * metadata. One retry at a time: the retry first claims the message (failed → queued with an open attempt, a
 * conditional write only one caller wins), then sends, then settles. Success moves it to `sent` (with
 * `retriedAt`); a failure that still holds returns it to `failed` and answers 400 `retry_failed` with the
 * upstream code and the action required.
 */
import { missingRecord } from '#shared/auth/ownership.ts';
import { ApiError, badRequest, notFound } from '#shared/http/errors.ts';
import { commit } from '#shared/events/outbox.ts';
import { keys } from '#shared/store/keys.ts';
import { batchGetAll } from '#shared/store/batch.ts';
import { sendMessage as upstreamSend, UpstreamError } from '#shared/upstream/client.ts';
import { toDeliveryError } from '#shared/upstream/error-codes.ts';
import { getConversation, conversationTouch } from '#shared/conversations/repository.ts';
import type { Business } from '#shared/business/repository.ts';
import { toMessage, type Message } from './repository.ts';
import { claimItems, messageConditionFailed, newAttempt, settleFailed, settleSent } from './send-state.ts';
import { messagingAccount } from './send-route.ts';
import { templateContext } from './template-context.ts';

export interface RetryResult {
  message: string;
  data: { id: string; messageId: string; status: 'sent'; retriedAt: string };
}

const notRetryable = (id: string, status: string) =>
  badRequest('invalid_state', `Only failed messages can be retried; this message is ${status}`, { data: { id, status } });

/** The message and its business's number, in one read. */
async function load(businessId: string, id: string): Promise<{ message?: Message; business?: Business }> {
  const wanted = [keys.message(businessId, id), keys.business(businessId)];
  const items = await batchGetAll(wanted);
  const item = (sk: string) => items.find((it) => it.sk === sk);
  const message = item(wanted[0].sk);
  return { message: message ? toMessage(message) : undefined, business: item(wanted[1].sk) as Business | undefined };
}

export async function retryMessage(businessId: string, id: string): Promise<RetryResult> {
  const { message, business } = await load(businessId, id);
  if (!message) throw await missingRecord('message', id, businessId, notFound(`Message ${id} not found`));
  if (message.direction !== 'outbound') throw notFound(`Message ${id} not found`);
  if (message.status !== 'failed') throw notRetryable(id, message.status);
  const { phoneNumberId } = messagingAccount(business);

  const attempt = newAttempt();
  const claimedAt = new Date().toISOString();
  const [claimed, conversation] = await Promise.all([
    commit(claimItems(message, attempt, claimedAt)).then(
      () => true,
      (err) => (messageConditionFailed(err) ? false : Promise.reject(err)),
    ),
    getConversation(businessId, message.conversationId),
  ]);
  // Another retry holds the message (or has sent it): this one sends nothing.
  if (!claimed) throw badRequest('invalid_state', 'The message is being retried by another request or is no longer failed', { data: { id } });

  let result;
  try {
    result = await upstreamSend(phoneNumberId, message.payload);
  } catch (err) {
    if (!(err instanceof UpstreamError)) throw err;
    const failure = toDeliveryError(err, templateContext(message.payload));
    const error = { code: failure.code, error: failure.error, message: failure.message, ...(failure.details ? { details: failure.details } : {}) };
    const at = new Date().toISOString();
    // Still failed: the message keeps its state (no new event), with the latest error and attempt count.
    await settleFailed({ message, attempt, at, error, sets: { lastRetryAt: at, failedAt: message.failedAt ?? at }, retry: true, emit: false });
    throw new ApiError(400, {
      error: 'retry_failed',
      message: `The retry failed: ${failure.message}`,
      code: failure.code,
      action_required: failure.action_required,
      instructions: failure.instructions,
      ...(failure.details ? { details: failure.details } : {}),
      data: { id, status: 'failed' },
    });
  }

  const retriedAt = new Date().toISOString();
  await settleSent({
    message,
    attempt,
    at: retriedAt,
    wamid: result.wamid,
    waId: result.waId || message.waId,
    sets: { retriedAt },
    retry: true,
    items: conversation ? [conversationTouch(conversation, { at: retriedAt, direction: 'outbound' })] : [],
    eventExtra: { retried_at: retriedAt },
  });
  return { message: 'Message sent successfully', data: { id, messageId: result.wamid, status: 'sent', retriedAt } };
}
