/**
 * The media step of the send path (shared/messages/send.ts loads it for image, video, audio, document and
 * sticker messages and hands it the upstream step of shared/messages/dispatch.ts, which this module never
 * imports at run time): apply the contract's size and format rules to the draft, proxy a link the upstream
 * cannot download (131052), and when the media worker needs longer than the wait budget, store the
 * message as `queued` and answer 202 (the worker's finisher completes the send and emits its event).
 */
import { ApiError } from '#shared/http/errors.ts';
import { commit } from '#shared/events/outbox.ts';
import { messageOwnerPut, messagePut } from '#shared/messages/repository.ts';
import { outboundMessage, sendResult, type OutboundDraft } from '#shared/messages/draft.ts';
import type { Dispatch } from '#shared/messages/dispatch.ts';
import type { Outcome } from '#shared/messages/idempotency.ts';
import type { UpstreamError } from '#shared/upstream/client.ts';
import { isMediaType, type MediaType } from './formats.ts';
import { upstreamRefusal } from './upstream-refusal.ts';
import { templateHeaderLink } from '#shared/templates/header-link.ts';
import { prepareThroughWorker } from './jobs.ts';
import { planAfterUpstreamError, planMediaSend, type MediaJobReason, type MediaObject, type MediaPlan, type MediaSendRequest, type PreparedMedia } from './send-media.ts';
import { isTransactionCancelled } from '#shared/store/transact.ts';

/** The finisher name the media worker knows (shared/media/outbound-finisher.ts). */
export const OUTBOUND_FINISHER = 'outbound-message';

export const isMediaDraft = (draft: OutboundDraft): boolean => isMediaType(draft.messageType);

/**
 * Puts prepared media into a draft (or a stored message a retry sends again): payload object, message type, and
 * `metadata` after a conversion to a document; for a template, into its header parameter (the file by id instead of
 * the link).
 */
export function applyPrepared(draft: { messageType: string; payload: Record<string, any>; metadata?: Record<string, unknown> }, prepared: PreparedMedia): void {
  if (draft.messageType === 'template') {
    const header = templateHeaderLink(draft.payload);
    if (header) header.param[header.key] = prepared.media;
    return;
  }
  const original = draft.messageType;
  if (prepared.type !== original) delete draft.payload[original];
  draft.payload.type = prepared.type;
  draft.payload[prepared.type] = prepared.media;
  draft.messageType = prepared.type;
  if (prepared.metadata) draft.metadata = { ...(draft.metadata ?? {}), ...prepared.metadata };
}

/** A media send's request and what its file needs, decided before anything is recorded. */
export interface MediaStep {
  request: MediaSendRequest;
  plan: MediaPlan;
}

/**
 * The media rules that need no contact or conversation (the id's owner, the link's size and format): checked before the
 * send path looks up or creates them, so that a refused file (403, 413, 400) leaves nothing behind. `media` is the
 * request's media object (with service extensions such as `voice`); the caller's `autoConvert` is the draft's.
 */
export async function planMediaMessage(draft: OutboundDraft, media: MediaObject): Promise<MediaStep> {
  const request: MediaSendRequest = { type: draft.messageType as MediaType, media, autoConvert: draft.autoConvert === true };
  return { request, plan: await planMediaSend(draft.businessId, draft.phoneNumberId, request) };
}

/** The media step of a send planned by planMediaMessage; `dispatch` is the send path's upstream step. */
export async function sendMediaMessage(draft: OutboundDraft, { request, plan }: MediaStep, dispatch: Dispatch): Promise<Outcome> {
  if (plan.kind === 'job') {
    const queued = await throughWorker(draft, request, plan.reason);
    if (queued) return queued;
  } else {
    applyPrepared(draft, plan.prepared);
  }
  if (draft.payload[draft.messageType] && (draft.payload[draft.messageType] as { link?: string }).link === undefined) return dispatch(draft);
  return dispatch(draft, (err) => recoverLink(draft, request, err, dispatch));
}

/** Runs a media job; applies its result to the draft, or stores the message as queued and answers 202. */
async function throughWorker(draft: OutboundDraft, request: MediaSendRequest, reason: MediaJobReason): Promise<Outcome | undefined> {
  const result = await prepareThroughWorker({
    businessId: draft.businessId,
    phoneNumberId: draft.phoneNumberId,
    reason,
    request,
    finisher: OUTBOUND_FINISHER,
    context: { draft: JSON.parse(JSON.stringify(draft)) },
  });
  if (result.status === 'ready') {
    applyPrepared(draft, result.prepared);
    return undefined;
  }
  return storeQueued(draft);
}

/**
 * A template's header link the upstream could not fetch (131052): proxied by the media worker as a media message's
 * link is (the contract's proxy rule), then sent with the header by id; past the wait budget the message is stored
 * queued (202) and the worker's finisher sends it. When the file cannot be fetched here either, the upstream's answer stands.
 */
export async function recoverTemplateHeader(draft: OutboundDraft, err: UpstreamError, dispatch: Dispatch): Promise<Outcome | UpstreamError | undefined> {
  const header = err.code === 131052 ? templateHeaderLink(draft.payload) : undefined;
  if (!header) return undefined;
  return takeOver(draft, { type: header.type, media: { link: header.link }, autoConvert: false }, 'proxy', dispatch);
}

/** The upstream could not fetch the link (131052) or found it too large (131053): the worker takes over. */
async function recoverLink(draft: OutboundDraft, request: MediaSendRequest, err: UpstreamError, dispatch: Dispatch): Promise<Outcome | UpstreamError | undefined> {
  const plan = planAfterUpstreamError(err.code, request);
  return plan?.kind === 'job' ? takeOver(draft, request, plan.reason, dispatch) : undefined;
}

/**
 * The media worker takes a send over after an upstream refusal: sent again once ready, 202 past the budget. A file
 * the worker fetched and found in a format its type does not take fails as the upstream fails such a file (131051).
 */
async function takeOver(draft: OutboundDraft, request: MediaSendRequest, reason: MediaJobReason, dispatch: Dispatch): Promise<Outcome | UpstreamError | undefined> {
  try {
    const queued = await throughWorker(draft, request, reason);
    if (queued) return queued;
  } catch (failure) {
    // 131053 with autoConvert off is the contract's 413; other failures of the proxy leave the upstream's answer.
    if (failure instanceof ApiError && failure.status === 413) throw failure;
    if (failure instanceof ApiError && failure.body.error === 'unsupported_media_type') {
      return upstreamRefusal(failure);
    }
    if (failure instanceof ApiError) return undefined;
    throw failure;
  }
  return dispatch(draft);
}

async function storeQueued(draft: OutboundDraft): Promise<Outcome> {
  const now = new Date().toISOString();
  const message = outboundMessage(draft, now, 'queued');
  // Only if the worker has not finished it meanwhile.
  await commit([messagePut(message, 'attribute_not_exists(pk)'), messageOwnerPut(message)]).catch((err) => {
    if (!isTransactionCancelled(err)) throw err;
  });
  return { status: 202, body: sendResult(message, draft.input) as unknown as Record<string, unknown> };
}
