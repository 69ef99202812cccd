/**
 * `POST /messages/v1/{id}/retry`: a failed message is sent again with its stored recipient, type, content and
 * metadata. One retry at a time: the retry first claims the message (failed → queued with an open attempt, a
 * conditional write only one caller wins), then sends, then settles. Success moves it to `sent` (with
 * `retriedAt`); a failure that still holds returns it to `failed` and answers 400 `retry_failed` with the
 * upstream code and the action required.
 */
import { logger } from '#shared/log/logger.ts';
import { missingRecord } from '#shared/auth/ownership.ts';
import { ApiError, badRequest, notFound } from '#shared/http/errors.ts';
import { commit, type TransactItem } from '#shared/events/outbox.ts';
import { keys } from '#shared/store/keys.ts';
import { table } from '#shared/store/client.ts';
import { cancellationCodes } from '#shared/store/transact.ts';
import { batchGetAll } from '#shared/store/batch.ts';
import { reserveSend, sendMessage as upstreamSend, UpstreamError } from '#shared/upstream/client.ts';
import { toDeliveryError } from '#shared/upstream/error-codes.ts';
import { conversationTouch, unreadOutboundTouch, untouched } from '#shared/conversations/repository.ts';
import type { Business } from '#shared/business/repository.ts';
import { toMessage, type Message } from './repository.ts';
import { claimItems, messageConditionFailed, newAttempt, settleFailed, settleSent, unclaimItems, withConversationTouch } from './send-state.ts';
import { messagingAccount } from './send-route.ts';
import { reactedMessage, reactionUpdate } from './reaction.ts';
import { aiAfterSend, handoffPauseOf } from './draft.ts';
import { aiSettingsFromItem, type AiSettings } from '#shared/ai/settings.ts';
import { templateContext } from '#shared/templates/error-context.ts';
import { budgetRefused } from './ordinary-budget.ts';
import { consumeOrdinarySend } from '#shared/broadcasts/budget.ts';
import { UUID_RE } from '#shared/http/schemas.ts';
import { isMediaType } from '#shared/media/formats.ts';
import { templateHeaderLink } from '#shared/templates/header-link.ts';

export interface RetryResult {
  message: string;
  data: { id: string; messageId: string; status: 'sent'; retriedAt: string };
}

const notRetryable = (id: string, status: string) =>
  badRequest('invalid_state', `Only failed messages can be retried; this message is ${status}`, { data: { id, status } });

export interface RetryContext {
  message?: Message;
  business?: Business;
  /** Whether a human reply pauses the AI (its handoff), as a send reads it. */
  aiSettings?: AiSettings;
}

/** The message, its business's number and AI settings, in one read (the endpoint starts it beside the rate limit). */
export async function loadRetryContext(businessId: string, id: string): Promise<RetryContext> {
  const wanted = [keys.message(businessId, id), keys.business(businessId), keys.aiSettings(businessId)];
  const items = await batchGetAll(wanted);
  const item = (sk: string) => items.find((it) => it.sk === sk);
  const message = item(wanted[0].sk);
  return { message: message ? toMessage(message) : undefined, business: item(wanted[1].sk) as Business | undefined, aiSettings: aiSettingsFromItem(item(wanted[2].sk)) };
}

/** The retry context of a path id, or nothing when the id is no message id or the read fails (the retry reads again). */
export const prefetchRetryContext = (businessId: string, id: string | undefined): Promise<RetryContext | undefined> =>
  id && UUID_RE.test(id) ? loadRetryContext(businessId, id).catch(() => undefined) : Promise.resolve(undefined);

/**
 * A broadcast's run retrying its recipient's message (one the upstream's throttling failed): the run's pace took the
 * budget unit, the claim holds only while `claimIf` does (the broadcast not cancelled; else `refused()` is thrown),
 * and the run settles its recipient itself.
 */
export interface BroadcastRetry {
  claimIf: { items: TransactItem[]; refused: () => Error };
}

export async function retryMessage(businessId: string, id: string, prefetched?: RetryContext, broadcast?: BroadcastRetry): Promise<RetryResult> {
  const { message, business, aiSettings } = prefetched ?? (await loadRetryContext(businessId, id));
  if (!message) throw await missingRecord('message', id, businessId, notFound(`Message ${id} not found`));
  // An inbound message is never failed: the contract's "status is not failed" answer, as for a sent one.
  if (message.direction !== 'outbound' || message.status !== 'failed') throw notRetryable(id, message.status);
  const { phoneNumberId } = messagingAccount(business);

  const attempt = newAttempt();
  const claimedAt = new Date().toISOString();
  // Claimed while the business's budget unit and the number's throughput place are taken.
  const reserved = reserveSend(phoneNumberId);
  const claim = claimItems(message, attempt, claimedAt);
  const conditions = broadcast?.claimIf.items ?? [];
  const [claimed, budgetTaken] = await Promise.all([
    commit([...claim, ...conditions, contactLive(message)]).then(
      () => true as const,
      (err) => {
        if (messageConditionFailed(err)) return false;
        const failed = cancellationCodes(err)?.lastIndexOf('ConditionalCheckFailed') ?? -1;
        if (failed === claim.length + conditions.length) return 'contact deleted' as const;
        if (failed >= claim.length) return 'refused' as const;
        return Promise.reject(err);
      },
    ),
    broadcast ? Promise.resolve(true) : consumeOrdinarySend(businessId),
  ]);
  // Nothing was claimed: the message stays failed, as when another retry holds it.
  if (claimed === 'contact deleted') {
    throw notFound(`The contact of message ${id} was deleted; a retry would send to a contact that no longer exists`);
  }
  if (claimed === 'refused') throw broadcast!.claimIf.refused();
  if (claimed && !budgetTaken) {
    // Refused before it went out: the message goes back to failed, untouched.
    await commit(unclaimItems(message, attempt, new Date().toISOString()));
  }
  if (!budgetTaken) throw budgetRefused();
  // Another retry holds the message (or has sent it): this one sends nothing.
  if (!claimed) throw badRequest('invalid_state', 'The message is being retried by another request or is no longer failed', { data: { id } });

  let result;
  // What the media step changed in the message (its file prepared again), stored with the send as a first send stores it.
  let prepared: Pick<Message, 'messageType' | 'payload' | 'metadata'> | undefined;
  try {
    prepared = await preparedMedia(businessId, phoneNumberId, message);
    // The message's id as the callback data, as a first send passes it (a send the media worker failed was stored without).
    const payload: Record<string, any> = { biz_opaque_callback_data: message.id, ...(prepared?.payload ?? message.payload) };
    result = await upstreamSend(businessId, phoneNumberId, payload, reserved).catch(async (err: unknown) => {
      // A link the upstream could not fetch: the file fetched and uploaded here (the contract's proxy), as on the first send.
      const proxied = err instanceof UpstreamError && err.code === 131052 ? await proxiedPayload(businessId, phoneNumberId, String(payload.type), payload) : undefined;
      if (!proxied) throw err;
      return upstreamSend(businessId, phoneNumberId, proxied);
    });
  } catch (err) {
    if (err instanceof MediaStillPreparing) {
      // Nothing went upstream and nothing failed: the message goes back to failed as it was, and the client retries.
      await commit(unclaimItems(message, attempt, new Date().toISOString()));
      throw new ApiError(503, { error: 'service_unavailable', message: `The media file of message ${id} is still being prepared; retry shortly` }, { 'Retry-After': String(MEDIA_RETRY_AFTER_SECONDS) });
    }
    if (!(err instanceof UpstreamError)) throw err;
    const failure = toDeliveryError(err, { ...templateContext(message.payload), messageId: id });
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
  // A reaction sent now replaces the reaction of the message it names, as when the first send went.
  const reacted = message.messageType === 'reaction' ? await reactedMessage(businessId, message) : undefined;
  const reaction = reacted ? [reactionUpdate(businessId, reacted, id, retriedAt)] : [];
  // The send's AI control, or a person's handoff, applies once it is sent, as on a first send that went.
  const handoff = handoffPauseOf(message.sentBy, message.ai, aiSettings?.handoffPauseMinutes ?? 0);
  // The conversation is touched without being read (read only if the touch's condition does not hold).
  await withConversationTouch(
    businessId,
    message.conversationId,
    'sent',
    (touch) => settleSent({ message: { ...message, ...prepared }, attempt, at: retriedAt, wamid: result.wamid, waId: result.waId || message.waId, sets: { retriedAt, ...prepared }, retry: true, items: [touch, ...reaction], eventExtra: { retried_at: retriedAt } }),
    // A conversation closed since the message failed stays as it was closed: the retry does not lift it in the list.
    () => unreadOutboundTouch(businessId, message.conversationId, { at: retriedAt, openOnly: true, ...aiAfterSend(message.ai, handoff) }),
    (current) => (current.status === 'open'
      ? conversationTouch(current, { at: retriedAt, direction: 'outbound', ...aiAfterSend(message.ai, handoff, current) })
      : untouched(businessId, message.conversationId)),
  );
  if (message.broadcastId && !broadcast) {
    // A broadcast's recipient follows its message: sent again, as its events say. Not a reason to fail the answer: the
    // message is sent.
    const { onMessageRetried } = await import('#shared/broadcasts/status.ts');
    await onMessageRetried(businessId, id, result.wamid, retriedAt)
      .catch((err) => logger.error('broadcast recipient not moved to sent after a retry', { businessId, messageId: id, broadcastId: message.broadcastId, error: err as Error }));
  }
  return { message: 'Message sent successfully', data: { id, messageId: result.wamid, status: 'sent', retriedAt } };
}

/**
 * The claim's check that the message's contact is still there: a retry does not send to a contact deleted since (the
 * contract's `not_found` "contact missing"), whose conversation no longer shows in the inbox. Part of the claim's
 * transaction, so it costs no round trip of its own.
 */
const contactLive = (message: Message): TransactItem => ({
  ConditionCheck: {
    TableName: table(),
    Key: keys.contact(message.businessId, message.contactId),
    ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(deleted_at) OR deleted_at = :none)',
    ExpressionAttributeValues: { ':none': null },
  },
});

/** The media worker was not done within the send's budget: the retry is answered 503, the message left failed as it was. */
class MediaStillPreparing extends Error {}
const MEDIA_RETRY_AFTER_SECONDS = 5;

/**
 * The message with its media prepared again for a retry, or undefined when the stored payload goes as it is: a media
 * message's link is planned again as on the first send, because the file may have changed since and because a file
 * the media worker failed to prepare (a 202 send) never went upstream as stored. A file that still breaks the media
 * rules fails the retry with the upstream's code for such a file (131053 too large, 131051 unsupported); one the worker
 * must prepare (an image by link over 5 MB is compressed) is prepared within the send's budget, and past it the retry
 * answers 503 and changes nothing (MediaStillPreparing). The send's `autoConvert`, kept with the message, applies again
 * (a file now over the limit may go as a document); the prepared file goes into the message as into a first send's draft.
 */
async function preparedMedia(businessId: string, phoneNumberId: string, message: Message): Promise<Pick<Message, 'messageType' | 'payload' | 'metadata'> | undefined> {
  const type = message.messageType;
  const media = (message.payload as Record<string, any>)[type];
  if (!isMediaType(type) || typeof media?.link !== 'string') return undefined;
  const [{ planMediaSend }, { prepareThroughWorker }, { upstreamRefusal }, { applyPrepared }] = await Promise.all([
    import('#shared/media/send-media.ts'),
    import('#shared/media/jobs.ts'),
    import('#shared/media/upstream-refusal.ts'),
    import('#shared/media/outbound.ts'),
  ]);
  const request = { type, media, autoConvert: message.autoConvert === true };
  try {
    const plan = await planMediaSend(businessId, phoneNumberId, request);
    const done = plan.kind === 'ready' ? { status: 'ready' as const, prepared: plan.prepared } : await prepareThroughWorker({ businessId, phoneNumberId, reason: plan.reason, request });
    if (done.status === 'queued') throw new MediaStillPreparing();
    const next: Pick<Message, 'messageType' | 'payload' | 'metadata'> = { messageType: type, payload: { ...message.payload }, ...(message.metadata ? { metadata: message.metadata } : {}) };
    applyPrepared(next, done.prepared);
    return next;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    throw upstreamRefusal(err);
  }
}

/**
 * The payload sent with the media link the upstream could not fetch (a media message's, or a template's header link) fetched
 * by the service and uploaded to the number's media store instead: by the media worker, as on the first send (the retry
 * function holds no media code), waited for within the send's budget. Undefined when the message has no such link, the
 * file cannot be fetched here either, or the worker is not done within the budget: the upstream's 131052 then stands
 * (the client may retry again).
 */
async function proxiedPayload(businessId: string, phoneNumberId: string, type: string, sent: Record<string, any>): Promise<Record<string, any> | undefined> {
  const payload = structuredClone(sent);
  const header = type === 'template' ? templateHeaderLink(payload) : undefined;
  const media = header ? { link: header.link } : isMediaType(type) ? payload[type] : undefined;
  const mediaType = header?.type ?? type;
  if (!isMediaType(mediaType) || typeof media?.link !== 'string') return undefined;
  const { prepareThroughWorker } = await import('#shared/media/jobs.ts');
  const result = await prepareThroughWorker({ businessId, phoneNumberId, reason: 'proxy', request: { type: mediaType, media, autoConvert: false } }).catch((err: unknown) => {
    if (err instanceof ApiError) return undefined;
    throw err;
  });
  if (result?.status !== 'ready' || result.prepared.type !== mediaType) return undefined;
  if (header) header.param[header.key] = result.prepared.media;
  else payload[type] = result.prepared.media;
  return payload;
}
