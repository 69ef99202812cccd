/**
 * Completes a media send that the endpoint handed over (202 `queued`): with the worker's prepared media
 * the message goes upstream through the normal send path (recording `sent` or `failed` with its event);
 * a media failure records the message as failed with `message.failed`. The media worker registers it.
 */
import { ApiError } from '#shared/http/errors.ts';
import { commit, newEvent } from '#shared/events/outbox.ts';
import { getConversation } from '#shared/conversations/repository.ts';
import { eventData } from '#shared/messages/events.ts';
import { getMessage, messagePut, type Message } from '#shared/messages/repository.ts';
import { outboundMessage, type OutboundDraft } from '#shared/messages/draft.ts';
import { dispatchOutbound } from '#shared/messages/dispatch.ts';
import { logger } from '#shared/log/logger.ts';
import { outcomeError, registerMediaJobFinisher, type MediaJobOutcome, type MediaJobRecord } from './jobs.ts';
import { upstreamCodeOf } from './errors.ts';
import { deliveryErrorName } from '#shared/upstream/error-codes.ts';
import { applyPrepared, OUTBOUND_FINISHER } from './outbound.ts';

async function finish(job: MediaJobRecord, outcome: MediaJobOutcome): Promise<void> {
  const draft = (job.context as { draft: OutboundDraft }).draft;
  const existing = await getMessage(draft.businessId, draft.id);
  // A retry of this worker after the send went out must not send twice.
  if (existing && existing.status !== 'queued') return;
  draft.conversation = (await getConversation(draft.businessId, draft.conversation.id)) ?? draft.conversation;

  if (outcome.status === 'done') {
    applyPrepared(draft, outcome.prepared);
    try {
      await dispatchOutbound(draft);
    } catch (err) {
      // A delivery failure is already recorded as failed, with its message.failed event.
      if (!(err instanceof ApiError)) throw err;
    }
    return;
  }

  const now = new Date().toISOString();
  const body = outcome.error.body as { error?: string; message?: string; code?: string };
  const message: Message = {
    ...(existing ?? outboundMessage(draft, now)),
    status: 'failed',
    failedAt: now,
    updatedAt: now,
    error: { ...failureOf(outcome), message: body.message ?? 'The media file could not be prepared' },
  } as Message;
  await commit(
    [messagePut(message)],
    [newEvent(draft.businessId, 'message.failed', eventData(message, { sent_by: draft.sentBy, failed_at: now, error: message.error }))],
  );
  logger.info('queued media send failed', { messageId: draft.id, error: message.error?.error });
}

/**
 * The stored failure of a media file the worker refused: where the upstream has a code for such a file, that code with
 * the contract's name for it (131053 `file_too_large`, 131051 `unsupported_media_type`, 131052 `media_download_failed`),
 * as a retry of the message reports it; otherwise the worker's own error and its status.
 */
function failureOf(outcome: Extract<MediaJobOutcome, { status: 'failed' }>): { code: string; error: string } {
  const body = outcome.error.body as { error?: string; code?: string };
  const code = upstreamCodeOf(outcomeError(outcome));
  const name = code === undefined ? undefined : deliveryErrorName(code);
  if (code !== undefined && name) return { code: String(code), error: name };
  return { code: body.code ?? String(outcome.error.status), error: body.error ?? 'media_processing_failed' };
}

/** Lets the media worker complete the sends handed over to it (called once, by functions/workers/media.ts). */
export const registerOutboundFinisher = (): void => registerMediaJobFinisher(OUTBOUND_FINISHER, finish);
