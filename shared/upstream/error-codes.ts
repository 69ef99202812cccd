/**
 * Upstream delivery codes → the contract's error body (service-interface.md, "Upstream delivery codes").
 * `code` is a string in the reply. Unknown codes keep their code and upstream message.
 */
import type { UpstreamError } from './client.ts';
import { THROTTLE_CODES } from './throttle-codes.ts';

export interface DeliveryError {
  status: number;
  error: string;
  message: string;
  code: string;
  action_required: string;
  instructions: string;
  details?: Record<string, unknown>;
  /** Seconds to wait before retrying, when the upstream throttled or did not answer (sent as `Retry-After` too). */
  retry_after?: number;
}

interface Entry {
  error: string;
  message: string;
  action_required: string;
  instructions: string;
}

const CODES: Record<number, Entry> = {
  131047: {
    error: 'message_delivery_failed',
    message: 'The 24-hour window is closed: the recipient has not written to this number in the last 24 hours.',
    action_required: 'send_template',
    instructions: 'Send a template message (templates are allowed at any time), wait for the user to write to you, or retry later.',
  },
  131042: {
    error: 'message_delivery_failed',
    message: 'The payment method of the messaging account is missing or failing.',
    action_required: 'configure_payment',
    instructions: 'Configure a valid payment method in the upstream business account, then retry.',
  },
  130472: {
    error: 'invalid_recipient',
    message: 'The recipient number is not on the messaging platform.',
    action_required: 'check_number',
    instructions: 'Check the number: it must be a WhatsApp user in international format with a leading +.',
  },
  131026: {
    error: 'user_blocked',
    message: 'The recipient has blocked this business or cannot receive its messages.',
    action_required: 'none',
    instructions: 'None: the recipient must unblock the business before messages can be delivered.',
  },
  132000: {
    error: 'template_not_found',
    message: 'The template does not exist, is not approved, or the name or language is wrong.',
    action_required: 'verify_template',
    instructions: 'Verify the template name, that it is approved, and the language code.',
  },
  131048: {
    error: 'spam_rate_limit',
    message: 'Too many recipients reported messages from this number as spam.',
    action_required: 'reduce_sending',
    instructions: 'Reduce sending and improve message quality; wait before sending again.',
  },
  131052: {
    error: 'media_download_failed',
    message: 'The upstream platform could not download the media from the URL.',
    action_required: 'use_public_url_or_upload',
    instructions: 'Use a publicly reachable URL, or upload the file with POST /media/v1 and send its media_id.',
  },
  131051: {
    error: 'unsupported_media_type',
    message: 'The media format is not supported.',
    action_required: 'convert_media',
    instructions: 'Convert the file to a supported format (see Limits), or send it as a document.',
  },
  131053: {
    error: 'file_too_large',
    message: 'The media file is over the size limit of its type.',
    action_required: 'compress_or_upload',
    instructions: 'Compress the file, send it with autoConvert, or upload it with POST /media/v1.',
  },
};

/** The contract's error name for an upstream delivery code its table lists (Upstream delivery codes). */
export const deliveryErrorName = (code: number): string | undefined => CODES[code]?.error;

/**
 * Meta's codes for a template it cannot send as asked, besides the contract's 132000: 132001 (no such template, or not in
 * that language, or not approved), 132015 (paused for low quality) and 132016 (disabled). The contract's row for 132000
 * names these causes ("missing, not approved, or wrong name/language"), so they answer as it does, with their own code.
 */
const TEMPLATE_NOT_FOUND_CODES = new Set([132000, 132001, 132015, 132016]);

const isTemplateNotFound = (err: UpstreamError): boolean => err.code !== undefined && TEMPLATE_NOT_FOUND_CODES.has(err.code);

/** The contract's entry for the upstream code of `err`, when its table lists it. */
const listedCode = (err: UpstreamError): Entry | undefined =>
  err.code === undefined ? undefined : CODES[isTemplateNotFound(err) ? 132000 : err.code];

/** How long a client should wait before asking again after the upstream throttled or did not answer (seconds). */
const THROTTLED_RETRY_SECONDS = 30;
const UNAVAILABLE_RETRY_SECONDS = 5;

/** A transient failure that is the upstream throttling the number (not one that did not answer). */
const isThrottle = (err: UpstreamError): boolean => err.status === 429 || (err.code !== undefined && THROTTLE_CODES.has(err.code));

/** `context.messageId`, the stored message the failure belongs to, is what the retry instructions name. */
export function toDeliveryError(err: UpstreamError, context: { templateName?: string; language?: string; messageId: string }): DeliveryError {
  const entry = listedCode(err);
  if (entry) {
    return {
      status: 400,
      ...entry,
      code: String(err.code),
      ...(isTemplateNotFound(err) ? { details: { template_name: context.templateName ?? null, language: context.language ?? null, upstream: err.details ?? err.message } } : {}),
    };
  }
  if (err.transient) {
    const throttled = isThrottle(err);
    return retryLater({
      error: throttled ? 'upstream_throttled' : 'upstream_unavailable',
      message: throttled ? 'The upstream platform is throttling this phone number; the message was not sent.' : `The upstream platform did not accept the message after retries: ${err.message}`,
      code: String(err.code ?? (err.status || 'timeout')),
    }, context.messageId);
  }
  return {
    status: 400,
    error: 'upstream_error',
    message: err.message,
    code: String(err.code ?? err.status),
    action_required: 'check_request',
    instructions: err.details ?? CHECK_REQUEST,
  };
}

const CHECK_REQUEST = 'Check the request against the upstream error message and retry.';

/** A failure the upstream's throttling or silence caused: retried later, when it says (429 or 502). */
function retryLater(failure: { error: 'upstream_throttled' | 'upstream_unavailable'; message: string; code: string }, messageId: string): DeliveryError {
  const throttled = failure.error === 'upstream_throttled';
  return {
    status: throttled ? 429 : 502,
    ...failure,
    action_required: 'retry_later',
    instructions: `Retry the message later with POST /messages/v1/${messageId}/retry.`,
    retry_after: throttled ? THROTTLED_RETRY_SECONDS : UNAVAILABLE_RETRY_SECONDS,
  };
}

/** What a failed message keeps of its failure (the message view's `error`). */
export interface StoredFailure {
  code: string;
  error: string;
  message: string;
  details?: unknown;
}

/**
 * The answer a send's failure got, rebuilt from what its message kept: a repeat of the send under its Idempotency-Key
 * answers it again (status, `action_required`, `instructions`, `retry_after`). A failure the send itself did not
 * answer (an unconfirmed send failed by the sweep, a queued media step) is a 400 with what was kept.
 */
export function storedFailureReply(stored: StoredFailure, messageId: string): StoredFailure & { status: number; action_required?: string; instructions?: string; retry_after?: number } {
  if (stored.error === 'upstream_throttled' || stored.error === 'upstream_unavailable') {
    return retryLater({ error: stored.error, message: stored.message, code: stored.code }, messageId);
  }
  const entry = CODES[TEMPLATE_NOT_FOUND_CODES.has(Number(stored.code)) ? 132000 : Number(stored.code)];
  if (entry && entry.error === stored.error) return { status: 400, ...entry, ...stored };
  if (stored.error === 'upstream_error') return { status: 400, ...stored, action_required: 'check_request', instructions: CHECK_REQUEST };
  return { status: 400, ...stored };
}

/**
 * The reply to a request other than a message send whose upstream call failed (a media upload, read or delete, a
 * template list): a send is recorded and answered by its own rules, everything else gets this. A code of the
 * contract's table keeps its meaning (131053 on an upload is `file_too_large`); a throttle is a 429 and an upstream
 * that did not answer after retries a 502, both with `Retry-After`; any other refusal a 400 with Meta's message.
 */
export function toRequestFailure(err: UpstreamError): { status: number; body: Record<string, unknown>; headers: Record<string, string> } {
  const entry = listedCode(err);
  const code = err.code !== undefined ? { code: String(err.code) } : {};
  if (entry) return { status: 400, body: { ...entry, code: String(err.code) }, headers: {} };
  if (err.transient && isThrottle(err)) {
    return {
      status: 429,
      body: { error: 'upstream_throttled', message: 'The upstream platform is throttling this phone number; retry later.', ...code, retry_after: THROTTLED_RETRY_SECONDS },
      headers: { 'Retry-After': String(THROTTLED_RETRY_SECONDS) },
    };
  }
  if (err.transient) {
    return {
      status: 502,
      body: { error: 'upstream_unavailable', message: `The upstream platform did not answer after retries: ${err.message}`, ...code, retry_after: UNAVAILABLE_RETRY_SECONDS },
      headers: { 'Retry-After': String(UNAVAILABLE_RETRY_SECONDS) },
    };
  }
  return { status: 400, body: { error: 'upstream_error', message: err.message, ...code, ...(err.details ? { details: err.details } : {}) }, headers: {} };
}
