/**
 * The send path, shared by `POST /messages/v1`, the AI worker and broadcasts:
 * validate → business, AI settings and send route (one read) → template / reaction checks → contact and
 * conversation (from the route, else looked up in full) → media step for media types → record, upstream, settle
 * (dispatch.ts).
 *
 * A send to a known number records its message with one transaction, beside its budget unit and throughput
 * place, so that the message is recorded before it goes upstream at the cost of one round trip. A delivery the upstream
 * rejects is stored as `failed` (and can be retried) and answered with the contract's delivery-failure body,
 * carrying `data.id` and `data.status`.
 */
import { randomUUID } from 'node:crypto';
import { findOrCreateContactByPhone } from '#shared/contacts/repository.ts';
import type { Contact } from '#shared/contacts/model.ts';
import { normalizePhone } from '#shared/contacts/phone.ts';
import { ContactGone, findOrCreateConversation, type Conversation } from '#shared/conversations/repository.ts';
import { isMediaType } from '#shared/media/formats.ts';
import { onFirstUse } from '#shared/lang/on-first-use.ts';
import type { SendRequest } from './schemas.ts';
import { loadSendSchemas } from './schemas-loader.ts';
import { buildPayload } from './payload.ts';
import { resolveReactionTarget, resolveReplyTarget } from './reaction.ts';
import { bindToMessage, idempotent, unbindFromMessage, type Outcome } from './idempotency.ts';
import { getMessage, type SentBy } from './repository.ts';
import { handoffPauseOf, sendResult, type OutboundDraft, type SendResult } from './draft.ts';
import { DraftChecksFailed, dispatchOutbound, recordDraft, sendRecorded, type Dispatch } from './dispatch.ts';
import { templateHeaderLink } from '#shared/templates/header-link.ts';
import { budgetRefused, takeBudget } from './ordinary-budget.ts';
import { consumeOrdinarySend } from '#shared/broadcasts/budget.ts';
import { commit, type TransactItem } from '#shared/events/outbox.ts';
import { discardItems } from './send-state.ts';
import { reserveSend } from '#shared/upstream/client.ts';
import { storedFailureReply } from '#shared/upstream/error-codes.ts';
import { loadSendContext, routeChecks, routePut, type SendContext } from './send-route.ts';

export type { OutboundDraft, SendResult } from './draft.ts';

/** What only template and media sends need (the template catalogue, link checks, the media plan): loaded by the first. */
const templates = onFirstUse(() => import('#shared/templates/prepare.ts'));
const media = onFirstUse(() => import('#shared/media/outbound.ts'));
const embedded = onFirstUse(() => import('#shared/media/embedded.ts'));

export interface SendOptions {
  sentBy?: SentBy;
  idempotencyKey?: string;
  broadcastId?: string;
  /** The send context, when the caller started reading it already (the endpoint reads it beside the rate limit). */
  context?: Promise<SendContext | undefined>;
  /**
   * A template's quick-reply payloads go as the client sent them, as Meta sends them (the Cloud API's own endpoint:
   * its clients have no `allowButtonIdOverride`); otherwise they are resolved in the contract's order.
   */
  quickRepliesAsSent?: boolean;
  /**
   * Conditions the message is recorded under, before it goes upstream; when one fails, nothing is sent and `refused()`
   * is thrown (a broadcast's send stops at its cancel this way, however late in its second it was launched).
   */
  recordIf?: { items: TransactItem[]; refused: () => Error };
}

/** Sends and returns the Send result; a rejected delivery or a bad request throws an ApiError. */
export async function sendMessage(businessId: string, request: unknown, options: SendOptions = {}): Promise<SendResult> {
  return (await send(businessId, request, options)).body as unknown as SendResult;
}

/** The recipient's contact and open conversation, created when there are none (again when the contact is deleted meanwhile). */
async function contactAndConversation(businessId: string, to: string): Promise<{ contact: Contact & { phone_number: string }; conversation: Conversation }> {
  for (let attempt = 1; ; attempt++) {
    const { contact } = await findOrCreateContactByPhone(businessId, to, { origin: 'outbound' });
    try {
      return { contact, conversation: (await findOrCreateConversation(businessId, contact)).conversation };
    } catch (err) {
      if (!(err instanceof ContactGone) || attempt === 3) throw err;
    }
  }
}

/** Like sendMessage, with the HTTP status (200, or 202 when the media area finishes the send later). */
export async function send(businessId: string, request: unknown, options: SendOptions = {}): Promise<Outcome> {
  const key = options.idempotencyKey;
  if (key === undefined) return prepareAndDispatch(businessId, request, options);
  return idempotent(businessId, 'send', key, request, () => prepareAndDispatch(businessId, request, options), (messageId) => outcomeOfRecorded(businessId, messageId));
}

/** The number a send's route is kept under: the recipient as the contacts area claims it. */
export const routePhone = (to: string): string => normalizePhone(to) ?? `+${to.replace(/\D/g, '')}`;

/** Reads the send context of a request body; nothing when the body names no usable recipient or the read fails. */
export function prefetchSendContext(businessId: string, body: unknown): Promise<SendContext | undefined> {
  const to = (body as { to?: unknown } | undefined)?.to;
  if (typeof to !== 'string' || to.length > 64) return Promise.resolve(undefined);
  // A failure (no messaging account...) is answered by the send itself, after validation, when it reads again.
  return loadSendContext(businessId, routePhone(to)).catch(() => undefined);
}

/** The outcome of a message an earlier request under the same Idempotency-Key recorded; undefined while it is in flight. */
async function outcomeOfRecorded(businessId: string, messageId: string): Promise<Outcome | undefined> {
  const message = await getMessage(businessId, messageId);
  if (!message || message.status === 'queued') return undefined;
  if (message.status === 'failed') {
    const { status, ...failure } = storedFailureReply(message.error ?? { code: 'unknown', error: 'send_failed', message: 'The message was not sent' }, message.id);
    const data = { id: message.id, status: 'failed', conversationId: message.conversationId, messageType: message.messageType, direction: 'outbound', createdAt: message.createdAt };
    const retryAfter = failure.retry_after ? { 'Retry-After': String(failure.retry_after) } : undefined;
    return { status, body: { ...failure, data }, ...(retryAfter ? { headers: retryAfter } : {}) };
  }
  return { status: 200, body: sendResult(message) as unknown as Record<string, unknown> };
}

async function prepareAndDispatch(businessId: string, request: unknown, options: SendOptions): Promise<Outcome> {
  const req: SendRequest = (await loadSendSchemas()).parseSendRequest(request);
  const phone = routePhone(req.to);
  const context = (await options.context) ?? (await loadSendContext(businessId, phone));

  const extras: Parameters<typeof buildPayload>[1] = {};
  if (req.type === 'template') extras.template = (await (await templates()).prepareTemplate({ businessId, ...context }, req, { quickRepliesAsSent: options.quickRepliesAsSent })).template;
  // Media an interactive message names (its header, its cards) follows a template header's rules.
  if (req.type === 'interactive') await (await embedded()).requireSendableEmbeddedMedia(businessId, context.phoneNumberId, req.interactive);
  const upstreamStyle = req.messaging_product !== undefined;
  const reactionTarget = req.type === 'reaction' ? await resolveReactionTarget(businessId, req.to, req.reaction.message_id, upstreamStyle) : undefined;
  if (reactionTarget) extras.reactionWamid = reactionTarget.wamid;
  if (req.context?.message_id) extras.contextWamid = await resolveReplyTarget(businessId, req.context.message_id, upstreamStyle);

  const draft: OutboundDraft = {
    id: randomUUID(),
    businessId,
    phoneNumberId: context.phoneNumberId,
    // Contact and conversation come from the route or the full look-up below, before anything reads them.
    conversation: undefined as unknown as Conversation,
    contactId: '',
    to: req.to,
    // What the client gave as `to`, echoed as Meta echoes it (a number given as one, as its digits).
    ...(['string', 'number'].includes(typeof (request as { to?: unknown }).to) ? { input: String((request as { to: string | number }).to) } : {}),
    messageType: req.type,
    payload: buildPayload(req, extras),
    sentBy: options.sentBy ?? 'api',
    broadcastId: options.broadcastId,
    createdAt: new Date().toISOString(),
    ai: req.ai,
    ...(isMediaType(req.type) && (req as { autoConvert?: boolean }).autoConvert === true ? { autoConvert: true } : {}),
    ...(reactionTarget?.messageId ? { reactionTo: { messageId: reactionTarget.messageId, emoji: req.reaction.emoji } } : {}),
    // A person replying through the API without an `ai` object hands the conversation over: the AI pauses.
    handoffPauseUntil: handoffPauseOf(options.sentBy, req.ai, context.aiSettings.handoffPauseMinutes),
  };
  const binding = options.idempotencyKey !== undefined ? [bindToMessage(businessId, 'send', options.idempotencyKey, draft.id)] : [];
  // A template whose header link the upstream cannot fetch is proxied by the media worker, as a media message's link
  // is. Not for a broadcast's recipients: each would fetch the same file again (their broadcast fails them instead).
  const recover: Parameters<Dispatch>[1] = draft.messageType === 'template' && !options.broadcastId && templateHeaderLink(draft.payload)
    ? async (err) => {
      // Recorded again once the file is proxied: a route that changed meanwhile must not stop it there (the message
      // is already the recipient's), so the fast path's route checks go; the idempotency binding stays.
      draft.checks = draft.checks?.filter((item) => !('ConditionCheck' in item));
      return (await media()).recoverTemplateHeader(draft, err, dispatchOutbound);
    }
    : undefined;
  // A send through the API spends a unit of its business's message budget (shared with broadcasts).
  let budgetDue = draft.sentBy === 'api';
  // The caller's conditions come first among the draft's checks: a failed check's index tells whose it was.
  const conditions = options.recordIf?.items ?? [];
  const refusedByCaller = (err: unknown) => err instanceof DraftChecksFailed && err.index < conditions.length;

  if (context.route && !isMediaType(draft.messageType)) {
    // Known number: record against the route (checked in the same transaction) while the budget unit and the
    // number's throughput place are taken; the conversation is touched at the settle without being read.
    const route = context.route;
    Object.assign(draft, { contactId: route.contactId, checks: [...conditions, ...routeChecks(businessId, phone, route), ...binding], conversationUnread: true });
    draft.conversation = { id: route.conversationId } as Conversation;
    const reserved = reserveSend(draft.phoneNumberId);
    const [recorded, budgetTaken] = await Promise.all([
      recordDraft(draft).catch((err) => (refusedByCaller(err) ? Promise.reject(options.recordIf!.refused()) : err instanceof DraftChecksFailed ? undefined : Promise.reject(err))),
      budgetDue ? consumeOrdinarySend(businessId) : Promise.resolve(true),
    ]);
    if (!budgetTaken) {
      // Refused before it went out: the recording is taken back, and the key freed.
      if (recorded) await commit([...discardItems(recorded.message, recorded.attempt), ...(options.idempotencyKey !== undefined ? [unbindFromMessage(businessId, 'send', options.idempotencyKey, draft.id)] : [])]);
      throw budgetRefused();
    }
    budgetDue = false;
    if (recorded) return sendRecorded(draft, recorded, recover, reserved);
    // The route went stale (contact deleted or renumbered, conversation closed): look up in full below.
    draft.conversationUnread = false;
  }

  // A media file the rules refuse (another number's id, a link too large) is refused before a contact or conversation exists.
  const mediaStep = isMediaType(draft.messageType) ? await (await media()).planMediaMessage(draft, (req as Record<string, any>)[req.type]) : undefined;
  if (budgetDue) await takeBudget(businessId);
  const { contact, conversation } = await contactAndConversation(businessId, req.to);
  draft.contactId = contact.id;
  draft.conversation = conversation;
  draft.checks = [...conditions, routePut(businessId, contact.phone_number, { contactId: contact.id, conversationId: conversation.id }), ...binding];

  if (mediaStep) return (await media()).sendMediaMessage(draft, mediaStep, dispatchOutbound);
  return dispatchOutbound(draft, recover).catch((err) => Promise.reject(refusedByCaller(err) ? options.recordIf!.refused() : err));
}
