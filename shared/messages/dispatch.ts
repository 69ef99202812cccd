/**
 * The upstream step of every outbound message: record it (queued, with an open attempt), send it, settle it
 * (sent with its wamid, or failed with the contract's error). Recording first means a send that dies between
 * the upstream's answer and the settle still has its message: a status webhook settles it through the message id
 * passed as `biz_opaque_callback_data` (status.ts), and the sweep fails what no answer ever settled (pending-sweep.ts).
 */
import { ApiError } from '#shared/http/errors.ts';
import { commit } from '#shared/events/outbox.ts';
import type { TransactItem } from '#shared/events/outbox.ts';
import { conversationTouch, unreadOutboundTouch, type Conversation } from '#shared/conversations/repository.ts';
import { reserveSend, sendMessage as upstreamSend, UpstreamError } from '#shared/upstream/client.ts';
import { toDeliveryError } from '#shared/upstream/error-codes.ts';
import { messageFailed, messageSent } from '#shared/metrics/metrics.ts';
import type { Outcome } from './idempotency.ts';
import { getMessage, type Message } from './repository.ts';
import { aiAfterSend, outboundMessage, sendResult, type OutboundDraft } from './draft.ts';
import { cancellationCodes } from '#shared/store/transact.ts';
import { messageConditionFailed, newAttempt, recordItems, RECORD_ITEMS, releaseItems, settleFailed, settleSent, withConversationTouch } from './send-state.ts';
import { reactionUpdate } from './reaction.ts';
import { templateContext } from '#shared/templates/error-context.ts';

/**
 * Sends a draft upstream; `recover` may answer an upstream error instead of recording the failure (the media area's
 * proxy), or name the failure to record in its place (the proxy fetched the file and found what is wrong with it).
 */
export type Dispatch = (draft: OutboundDraft, recover?: (err: UpstreamError) => Promise<Outcome | UpstreamError | undefined>) => Promise<Outcome>;

/** The recording transaction was refused by one of the draft's own checks: `index` is its place in `draft.checks`. */
export class DraftChecksFailed extends Error {
  constructor(readonly index: number) {
    super('a check of the draft did not hold when it was recorded');
    this.name = 'DraftChecksFailed';
  }
}

export interface Recorded {
  message: Message;
  attempt: string;
}

/**
 * Records the draft as a queued message with an open attempt. The client's own `biz_opaque_callback_data` is
 * forwarded unchanged; without one, the message id goes in it, so that a status webhook can name the message.
 */
export async function recordDraft(draft: OutboundDraft): Promise<Recorded> {
  if (draft.payload.biz_opaque_callback_data === undefined) draft.payload.biz_opaque_callback_data = draft.id;
  const message = outboundMessage(draft, new Date().toISOString());
  const attempt = newAttempt();
  try {
    await commit(recordItems(message, attempt, draft.checks));
  } catch (err) {
    if (messageConditionFailed(err)) throw new ApiError(409, { error: 'send_in_progress', message: `Message ${draft.id} is already being sent or was sent` });
    const failedCheck = (cancellationCodes(err) ?? []).findIndex((code, i) => i >= RECORD_ITEMS && code === 'ConditionalCheckFailed');
    if (failedCheck >= 0) throw new DraftChecksFailed(failedCheck - RECORD_ITEMS);
    throw err;
  }
  return { message, attempt };
}

export const dispatchOutbound: Dispatch = async (draft, recover) => {
  // The number's throughput place is taken while the message is recorded.
  const reserved = reserveSend(draft.phoneNumberId);
  return sendRecorded(draft, await recordDraft(draft), recover, reserved);
};

/**
 * Runs a settle with the conversation's touch: from the read conversation, or (the fast path never read it) as
 * conditions, falling back to a read when they do not hold. A sent message carries its AI control and handoff.
 */
function settleTouching<T>(draft: OutboundDraft, at: string, sent: boolean, settle: (touch: TransactItem) => Promise<T>): Promise<T> {
  const ai = (current?: Conversation) => (sent ? aiAfterSend(draft.ai, draft.handoffPauseUntil, current) : {});
  const read = (current: Conversation) => conversationTouch(current, { at, direction: 'outbound', ...ai(current) });
  if (!draft.conversationUnread) return settle(read(draft.conversation));
  return withConversationTouch(draft.businessId, draft.conversation.id, sent ? 'sent' : 'failed', settle, () => unreadOutboundTouch(draft.businessId, draft.conversation.id, { at, ...ai() }), read);
}

/** Sends a recorded draft upstream (with its throughput place, when taken already) and settles it. */
export async function sendRecorded(draft: OutboundDraft, recorded: Recorded, recover?: Parameters<Dispatch>[1], reserved?: Promise<void>): Promise<Outcome> {
  const { message } = recorded;
  let attempt: string | undefined = recorded.attempt;
  let result;
  try {
    result = await upstreamSend(draft.businessId, draft.phoneNumberId, draft.payload, reserved);
  } catch (caught) {
    if (!(caught instanceof UpstreamError)) throw caught;
    let err = caught;
    if (recover) {
      // The media area may take the send over (e.g. proxy a link the upstream could not download, 131052):
      // the message stays queued, free for the media worker to send.
      await commit(releaseItems(message, attempt, new Date().toISOString()));
      attempt = undefined;
      const recovered = await recover(err);
      if (recovered instanceof UpstreamError) err = recovered;
      else if (recovered) return recovered;
    }
    const failure = toDeliveryError(err, { ...templateContext(draft.payload), messageId: message.id });
    const at = new Date().toISOString();
    const error = { code: failure.code, error: failure.error, message: failure.message, ...(failure.details ? { details: failure.details } : {}) };
    await settleTouching(draft, at, false, (touch) => settleFailed({ message, attempt, at, error, items: [touch] }));
    messageFailed(draft.messageType, failure.code);
    const { status, ...body } = failure;
    throw new ApiError(status, {
      ...body,
      data: { id: message.id, status: 'failed', conversationId: message.conversationId, messageType: message.messageType, direction: 'outbound', createdAt: message.createdAt },
    }, body.retry_after ? { 'Retry-After': String(body.retry_after) } : {}, err);
  }

  const at = new Date().toISOString();
  const waId = result.waId || message.waId;
  const settled = await settleTouching(draft, at, true, (touch) => settleSent({
    message,
    attempt,
    at,
    wamid: result.wamid,
    waId,
    items: [touch, ...(draft.reactionTo ? [reactionUpdate(draft.businessId, draft.reactionTo, message.id, at)] : [])],
  }));
  if (settled) messageSent(message.messageType);
  // Settled first by the message's status webhook: that write recorded it (and its event); answer with it.
  const stored = settled ? undefined : await getMessage(draft.businessId, message.id);
  const sent: Message = stored ?? { ...message, status: 'sent', wamid: result.wamid, waId };
  return { status: 200, body: sendResult(sent, draft.input) as unknown as Record<string, unknown> };
}
