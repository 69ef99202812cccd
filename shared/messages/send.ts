/**
 * The send path, shared by `POST /messages/v1`, the AI worker and broadcasts:
 * validate → resolve the business's number → template / reaction checks → contact and conversation →
 * (media preparation) → upstream → message + conversation written with their event in one transaction.
 *
 * A delivery the upstream rejects is stored as `failed` (and can be retried) and answered with the
 * contract's delivery-failure body, carrying `data.id` and `data.status`.
 */
import { randomUUID } from 'node:crypto';
import { ApiError } from '#shared/http/errors.ts';
import { newEvent, type TransactItem } from '#shared/events/outbox.ts';
import { table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';
import { commitWithRetry } from './transact.ts';
import { getBusiness } from '#shared/business/repository.ts';
import { findOrCreateContactByPhone, recordContactActivity } from '#shared/contacts/repository.ts';
import { conversationTouch, findOrCreateConversation, type Conversation } from '#shared/conversations/repository.ts';
import { prepareTemplate } from '#shared/templates/prepare.ts';
import { sendMessage as upstreamSend, UpstreamError } from '#shared/upstream/client.ts';
import { toDeliveryError } from '#shared/upstream/error-codes.ts';
import { logger } from '#shared/log/logger.ts';
import { messageFailed, messageSent } from '#shared/metrics/metrics.ts';
import { parseSendRequest, type SendRequest } from './schemas.ts';
import { buildPayload, contentOf, type UpstreamPayload } from './payload.ts';
import { resolveReactionTarget } from './reaction.ts';
import { idempotent, type Outcome } from './idempotency.ts';
import { messageOwnerPut, messagePut, wamidPut, type Message, type SentBy } from './repository.ts';
import { eventData } from './events.ts';
import { pauseAfterHumanReply } from '#shared/ai/controls.ts';
import { isMediaType } from '#shared/media/formats.ts';

export interface SendOptions {
  sentBy?: SentBy;
  idempotencyKey?: string;
  broadcastId?: string;
}

export interface SendResult {
  messaging_product: 'whatsapp';
  contacts: { input: string; wa_id: string }[];
  messages: { id: string; wamid: string }[];
  data: {
    id: string;
    conversationId: string;
    messageType: string;
    direction: 'outbound';
    status: string;
    createdAt: string;
    metadata?: Record<string, unknown>;
  };
}

/** An outbound message about to go upstream. */
export interface OutboundDraft {
  id: string;
  businessId: string;
  phoneNumberId: string;
  conversation: Conversation;
  contactId: string;
  to: string;
  /** The recipient exactly as the request wrote it (the Send result's `contacts[].input`). */
  input?: string;
  messageType: string;
  payload: UpstreamPayload;
  metadata?: Record<string, unknown>;
  sentBy: SentBy;
  broadcastId?: string;
  createdAt: string;
  ai?: { pause?: boolean; pauseDuration?: number; disable?: boolean };
  /** A reaction to a message the service knows: its current reaction is replaced (or removed by an empty emoji). */
  reactionTo?: { messageId: string; emoji: string };
}

/** Sends and returns the Send result; a rejected delivery or a bad request throws an ApiError. */
export async function sendMessage(businessId: string, request: unknown, options: SendOptions = {}): Promise<SendResult> {
  return (await send(businessId, request, options)).body as unknown as SendResult;
}

/** Like sendMessage, with the HTTP status (200, or 202 when the media area finishes the send later). */
export async function send(businessId: string, request: unknown, options: SendOptions = {}): Promise<Outcome> {
  if (options.idempotencyKey) return idempotent(businessId, 'send', options.idempotencyKey, request, () => prepareAndDispatch(businessId, request, options));
  return prepareAndDispatch(businessId, request, options);
}

export async function requirePhoneNumber(businessId: string): Promise<{ businessId: string; phoneNumberId: string; wabaId?: string }> {
  const business = await getBusiness(businessId);
  if (!business?.phoneNumberId) {
    throw new ApiError(400, { error: 'messaging_not_configured', message: 'This business has no messaging account (phone number id) configured' });
  }
  return { businessId, phoneNumberId: business.phoneNumberId, wabaId: business.wabaId };
}

async function prepareAndDispatch(businessId: string, request: unknown, options: SendOptions): Promise<Outcome> {
  const req: SendRequest = parseSendRequest(request);
  const business = await requirePhoneNumber(businessId);

  const extras: Parameters<typeof buildPayload>[1] = {};
  if (req.type === 'template') extras.template = (await prepareTemplate(business, req)).template;
  const reactionTarget = req.type === 'reaction' ? await resolveReactionTarget(businessId, req.to, req.reaction.message_id) : undefined;
  if (reactionTarget) extras.reactionWamid = reactionTarget.wamid;
  const payload = buildPayload(req, extras);

  const { contact } = await findOrCreateContactByPhone(businessId, req.to, { origin: 'outbound' });
  const { conversation } = await findOrCreateConversation(businessId, contact);
  const draft: OutboundDraft = {
    id: randomUUID(),
    businessId,
    phoneNumberId: business.phoneNumberId,
    conversation,
    contactId: contact.id,
    to: req.to,
    ...(typeof (request as { to?: unknown }).to === 'string' ? { input: (request as { to: string }).to } : {}),
    messageType: req.type,
    payload,
    sentBy: options.sentBy ?? 'api',
    broadcastId: options.broadcastId,
    createdAt: new Date().toISOString(),
    ai: req.ai,
    ...(reactionTarget?.messageId ? { reactionTo: { messageId: reactionTarget.messageId, emoji: req.reaction.emoji } } : {}),
  };

  // ---- MEDIA PREPARATION HOOK (media area) -----------------------------------------------------------
  // For image/video/audio/document/sticker sends, the media area plugs in here: size checks and
  // `autoConvert` (413 media_too_large, compression, sending as a document with `draft.metadata`), and
  // proxying a link the upstream cannot fetch (131052). It may rewrite `draft.payload`, `draft.messageType`
  // and `draft.metadata`, throw an ApiError, or take the send over asynchronously (store the message as
  // `queued` and return a 202 outcome; its worker completes it with `dispatchOutbound`).
  // `req.autoConvert` carries the caller's choice.
  // -----------------------------------------------------------------------------------------------------
  if (isMediaType(draft.messageType)) {
    // Loaded on first media send: text and template sends (and their cold starts) never pay for S3, probing and proxying.
    const { sendMediaMessage } = await import('#shared/media/outbound.ts');
    return sendMediaMessage(draft, (req as Record<string, any>)[req.type], (req as { autoConvert?: boolean }).autoConvert, dispatchOutbound);
  }
  return dispatchOutbound(draft);
}

const templateContext = (payload: UpstreamPayload) => {
  const t = payload.template as { name?: string; language?: { code?: string } } | undefined;
  return t ? { templateName: t.name, language: t.language?.code } : {};
};

/** Sends a prepared draft upstream and records the outcome (sent, or failed with the contract's error). */
export async function dispatchOutbound(draft: OutboundDraft, recover?: (err: UpstreamError) => Promise<Outcome | undefined>): Promise<Outcome> {
  let result;
  try {
    result = await upstreamSend(draft.businessId, draft.phoneNumberId, draft.payload);
  } catch (err) {
    if (!(err instanceof UpstreamError)) throw err;
    // The media area may answer instead (e.g. proxy a link the upstream could not download, 131052).
    const recovered = recover ? await recover(err) : undefined;
    if (recovered) return recovered;
    const failure = toDeliveryError(err, templateContext(draft.payload));
    const message = await storeFailed(draft, failure);
    messageFailed(draft.messageType, failure.code);
    const { status, ...body } = failure;
    throw new ApiError(status, {
      ...body,
      data: { id: message.id, status: 'failed', conversationId: message.conversationId, messageType: message.messageType, direction: 'outbound', createdAt: message.createdAt },
    });
  }
  const message = await storeSent(draft, result.wamid, result.waId);
  messageSent(message.messageType);

  if (draft.sentBy === 'api') {
    // ---- HUMAN SEND HOOK (AI area) -------------------------------------------------------------------
    // A person replied through the API without an `ai` object: pause the AI in the conversation (handoff).
    // The message is already out, so a failure here is logged, not answered as an error.
    // ----------------------------------------------------------------------------------------------------
    if (!draft.ai) {
      await pauseAfterHumanReply(draft.businessId, draft.conversation.id).catch((err) => logger.warn('AI handoff pause not recorded', { error: err as Error }));
    }
  }

  const body: SendResult = {
    messaging_product: 'whatsapp',
    contacts: [{ input: draft.input ?? draft.to, wa_id: result.waId || draft.to.replace(/\D/g, '') }],
    messages: [{ id: message.id, wamid: result.wamid }],
    data: {
      id: message.id,
      conversationId: message.conversationId,
      messageType: message.messageType,
      direction: 'outbound',
      status: message.status,
      createdAt: message.createdAt,
      ...(draft.metadata ? { metadata: draft.metadata } : {}),
    },
  };
  return { status: 200, body: body as unknown as Record<string, unknown> };
}

/** The stored message of an outbound draft, in the given status (sent, queued for the media area, failed). */
export const outboundMessage = (draft: OutboundDraft, now: string, status: Message['status'] = 'sent'): Message => ({
  id: draft.id,
  businessId: draft.businessId,
  conversationId: draft.conversation.id,
  contactId: draft.contactId,
  direction: 'outbound',
  messageType: draft.messageType,
  status,
  wamid: null,
  phoneNumber: draft.to,
  waId: draft.to.replace(/\D/g, ''),
  content: contentOf(draft.payload),
  payload: draft.payload,
  ...(draft.metadata ? { metadata: draft.metadata } : {}),
  sentBy: draft.sentBy,
  ...(draft.broadcastId ? { broadcastId: draft.broadcastId } : {}),
  error: null,
  createdAt: draft.createdAt,
  updatedAt: now,
});

/** One active reaction per message: the newest replaces the previous one; an empty emoji removes it. */
const reactionUpdate = (businessId: string, to: { messageId: string; emoji: string }, reactionMessageId: string, at: string): TransactItem => ({
  Update: {
    TableName: table(),
    Key: keys.message(businessId, to.messageId),
    ...(to.emoji === ''
      ? { UpdateExpression: 'REMOVE reaction' }
      : { UpdateExpression: 'SET reaction = :r', ExpressionAttributeValues: { ':r': { emoji: to.emoji, messageId: reactionMessageId, reactedAt: at } } }),
  },
});

async function storeSent(draft: OutboundDraft, wamid: string, waId: string): Promise<Message> {
  const now = new Date().toISOString();
  const message: Message = { ...outboundMessage(draft, now), wamid, waId: waId || draft.to.replace(/\D/g, ''), sentAt: now };
  const pauseMinutes = draft.ai?.pause ? draft.ai.pauseDuration ?? 5 : undefined;
  await commitWithRetry(
    [
      messagePut(message),
      messageOwnerPut(message),
      wamidPut(wamid, draft.businessId, message.id),
      conversationTouch(draft.conversation, {
        at: now,
        direction: 'outbound',
        aiPausedUntil: pauseMinutes ? new Date(Date.now() + pauseMinutes * 60_000).toISOString() : undefined,
        aiDisable: draft.ai?.disable === true,
      }),
      ...(draft.reactionTo ? [reactionUpdate(draft.businessId, draft.reactionTo, message.id, now)] : []),
    ],
    [newEvent(draft.businessId, 'message.sent', eventData(message, { sent_by: draft.sentBy, sent_at: now, content: message.content, ...(draft.broadcastId ? { broadcast_id: draft.broadcastId } : {}) }))],
  );
  await recordContactActivity(draft.businessId, draft.contactId, now).catch((err) => logger.warn('contact activity not recorded', { error: err as Error }));
  return message;
}

async function storeFailed(draft: OutboundDraft, failure: ReturnType<typeof toDeliveryError>): Promise<Message> {
  const now = new Date().toISOString();
  const message: Message = {
    ...outboundMessage(draft, now),
    status: 'failed',
    failedAt: now,
    error: { code: failure.code, error: failure.error, message: failure.message, ...(failure.details ? { details: failure.details } : {}) },
  };
  await commitWithRetry(
    [messagePut(message), messageOwnerPut(message), conversationTouch(draft.conversation, { at: now, direction: 'outbound' })],
    [newEvent(draft.businessId, 'message.failed', eventData(message, { sent_by: draft.sentBy, failed_at: now, error: message.error }))],
  );
  return message;
}
