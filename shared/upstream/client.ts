/**
 * The WhatsApp Cloud API client (or the local sandbox, same paths): send a message, upload media, read media
 * info, download media, list templates. Base URL and API version come from shared/config.ts; every call is made for
 * one business and carries that business's access token (its own, or the stack's: shared/secrets/business-token.ts).
 * An upstream 401 re-reads the token once (a rotation) before the caller sees it.
 *
 * Transient faults (HTTP 5xx, throttling 130429/429, network errors, timeouts) are retried with exponential
 * backoff before the caller sees them; permanent errors come back at once as an `UpstreamError` carrying
 * the Graph error's code, message and details. Messages are paced per phone number (Cloud API throughput).
 */
import { config } from '#shared/config.ts';
import { logger } from '#shared/log/logger.ts';
import { safeFetch, SafeFetchError, type SafeFetchResponse } from '#shared/net/safe-fetch.ts';
import { accessTokenFor, refreshedAccessTokenFor } from '#shared/secrets/business-token.ts';
import { reserveSendSlot } from './throughput.ts';
import { THROTTLE_CODES } from './throttle-codes.ts';
import { ANSWER_RESERVE_MS, invocationEnd } from '#shared/lang/invocation-end.ts';

export class UpstreamError extends Error {
  constructor(
    message: string,
    readonly status: number,
    /** Graph error code (e.g. 131047); undefined for network errors and timeouts. */
    readonly code: number | undefined,
    readonly details: string | undefined,
    readonly transient: boolean,
    /** The Graph error object exactly as the upstream answered it (the Cloud-API-compatible routes pass it on). */
    readonly graph?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'UpstreamError';
  }
}

export interface SendResult {
  wamid: string;
  /** The recipient's WhatsApp id (digits only). */
  waId: string;
  input: string;
}

export interface MediaInfo {
  id: string;
  url: string;
  mime_type: string;
  sha256: string;
  file_size: number;
}

export interface UpstreamTemplate {
  id?: string;
  name: string;
  language: string;
  status: string;
  category?: string;
  components: Record<string, any>[];
}

const base = () => `${config.upstreamBaseUrl.replace(/\/$/, '')}/${config.upstreamApiVersion}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Graph's OAuthException for an invalid or expired access token (sent with HTTP 401, sometimes 400). */
const INVALID_TOKEN_CODE = 190;

function toUpstreamError(res: SafeFetchResponse): UpstreamError {
  let err: Record<string, any> | undefined;
  try {
    err = JSON.parse(res.body.toString('utf8'))?.error;
  } catch {
    /* not a Graph error body */
  }
  const code = typeof err?.code === 'number' ? err.code : Number(err?.code) || undefined;
  const transient = res.status >= 500 || res.status === 429 || (code !== undefined && THROTTLE_CODES.has(code));
  const message = typeof err?.message === 'string' ? err.message : `Upstream answered HTTP ${res.status}`;
  const details = err?.error_data?.details ?? err?.error_user_msg;
  return new UpstreamError(message, res.status, code, typeof details === 'string' ? details : undefined, transient, err && typeof err === 'object' ? err : undefined);
}

interface UpstreamRequest {
  method?: 'GET' | 'POST' | 'DELETE';
  headers?: Record<string, string>;
  body?: string | Uint8Array;
}

/** The shortest upstream attempt worth making. */
const MIN_ATTEMPT_MS = 1_000;

/**
 * A successful answer's JSON body (Graph answers JSON). One that is no JSON object, or that carries Graph's `error`
 * object (as a proxy in front of Graph may answer 200), is the upstream's failure, never a crash of the caller.
 */
function json(res: SafeFetchResponse): Record<string, any> {
  let body: unknown;
  try {
    body = JSON.parse(res.body.toString('utf8'));
  } catch {
    throw new UpstreamError(`Upstream answered HTTP ${res.status} with a body that is not JSON`, res.status, undefined, undefined, false);
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new UpstreamError(`Upstream answered HTTP ${res.status} with no JSON object`, res.status, undefined, undefined, false);
  if (typeof (body as { error?: unknown }).error === 'object' && (body as { error?: unknown }).error !== null) throw toUpstreamError(res);
  return body as Record<string, any>;
}

/**
 * One HTTP call for `businessId` with the retry policy, on node:http(s) keep-alive agents (shared/net/safe-fetch.ts;
 * the upstream's addresses are the operator's and the upstream's own, not a user's, so private ones are allowed):
 * `fetch` would load Node's undici at a container's first call, about 50 ms of CPU, and costs more per call.
 */
async function call(businessId: string, url: string, request: UpstreamRequest, what: string): Promise<SafeFetchResponse> {
  const attempts = Math.max(1, config.upstreamMaxAttempts);
  let token = await accessTokenFor(businessId);
  let tokenRefreshed = false;
  let last: UpstreamError | undefined;
  // Within a request, the attempts end in time for the function to answer with the upstream's failure.
  const end = invocationEnd();
  const timeLeft = () => (end === undefined ? Infinity : end - ANSWER_RESERVE_MS - Date.now());
  for (let attempt = 1; attempt <= attempts; attempt++) {
    try {
      const res = await safeFetch(url, {
        method: request.method ?? 'GET',
        headers: { ...request.headers, authorization: `Bearer ${token}` },
        body: request.body,
        timeoutMs: Math.max(MIN_ATTEMPT_MS, Math.min(config.upstreamTimeoutMs, timeLeft())),
        followRedirects: 5,
        allowPrivate: true,
      });
      if (res.status >= 200 && res.status < 300) return res;
      last = toUpstreamError(res);
    } catch (err) {
      const timeout = err instanceof SafeFetchError && err.code === 'timeout';
      last = new UpstreamError(timeout ? `Upstream did not answer within ${config.upstreamTimeoutMs} ms` : `Upstream unreachable: ${(err as Error)?.message}`, 0, undefined, undefined, true);
    }
    if ((last.status === 401 || last.code === INVALID_TOKEN_CODE) && !tokenRefreshed) {
      // The token may have been rotated since this container read it: one more try with a fresh read, not counted as an attempt.
      tokenRefreshed = true;
      const fresh = await refreshedAccessTokenFor(businessId, token);
      if (fresh) {
        token = fresh;
        attempt--;
        continue;
      }
    }
    if (!last.transient || attempt === attempts) break;
    const delay = config.upstreamRetryBaseMs * 3 ** (attempt - 1) * (0.75 + Math.random() / 2);
    if (timeLeft() < delay + MIN_ATTEMPT_MS) break;
    logger.warn('transient upstream fault, retrying', { what, attempt, code: last.code, status: last.status, delayMs: Math.round(delay) });
    await sleep(delay);
  }
  throw last!;
}

// Cloud API throughput is per phone number: space sends out instead of provoking 130429.
const nextSlot = new Map<string, number>();
async function pace(phoneNumberId: string): Promise<void> {
  const interval = 1000 / Math.max(1, config.upstreamMessagesPerSecond);
  const now = Date.now();
  const slot = Math.max(now, nextSlot.get(phoneNumberId) ?? 0);
  nextSlot.set(phoneNumberId, slot + interval);
  if (slot > now) await sleep(slot - now);
  // Spacing above keeps one container smooth; the shared window keeps all of them within the number's throughput.
  await reserveSendSlot(phoneNumberId, config.upstreamMessagesPerSecond);
}

/**
 * A send's place in its number's throughput, to be passed to sendMessage: a caller may start it beside its own
 * writes so that the shared window costs no round trip of its own.
 */
export const reserveSend = (phoneNumberId: string): Promise<void> => {
  const reserved = pace(phoneNumberId);
  // Awaited by sendMessage; a caller that never gets there must not leave an unhandled rejection.
  reserved.catch(() => undefined);
  return reserved;
};

/**
 * POST /{phone-number-id}/messages with a Cloud API message payload, for the business that owns the number
 * (paced here unless `reserved` is given).
 */
export async function sendMessage(businessId: string, phoneNumberId: string, payload: Record<string, unknown>, reserved?: Promise<void>): Promise<SendResult> {
  await (reserved ?? pace(phoneNumberId));
  const res = await call(businessId, `${base()}/${encodeURIComponent(phoneNumberId)}/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(payload),
  }, 'send message');
  const body = json(res);
  const wamid = body?.messages?.[0]?.id;
  if (typeof wamid !== 'string') throw new UpstreamError('Upstream accepted the message without a message id', res.status, undefined, undefined, false);
  const input = String(payload.to ?? '');
  return { wamid, waId: String(body?.contacts?.[0]?.wa_id ?? input).replace(/\D/g, ''), input };
}

/** POST /{phone-number-id}/messages with a read receipt (and typing indicator): answered `{ success: true }`. */
export async function markRead(businessId: string, phoneNumberId: string, receipt: { messaging_product: 'whatsapp'; status: 'read'; message_id: string; typing_indicator?: { type: string } }): Promise<void> {
  json(await call(businessId, `${base()}/${encodeURIComponent(phoneNumberId)}/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(receipt),
  }, 'mark read'));
}

/** POST /{phone-number-id}/media (multipart) → the upstream media id. */
export async function uploadMedia(businessId: string, phoneNumberId: string, file: { bytes: Uint8Array; mimeType: string; filename?: string }): Promise<{ id: string }> {
  const form = new FormData();
  form.set('messaging_product', 'whatsapp');
  form.set('type', file.mimeType);
  form.set('file', new Blob([file.bytes as Uint8Array<ArrayBuffer>], { type: file.mimeType }), file.filename ?? 'file');
  // The platform's multipart encoder (its boundary in the content type), read once: every attempt sends the same bytes.
  const encoded = new Response(form);
  const res = await call(businessId, `${base()}/${encodeURIComponent(phoneNumberId)}/media`, {
    method: 'POST',
    headers: { 'content-type': encoded.headers.get('content-type')! },
    body: new Uint8Array(await encoded.arrayBuffer()),
  }, 'upload media');
  const id = json(res).id;
  if ((typeof id !== 'string' || !id) && typeof id !== 'number') throw new UpstreamError('Upstream accepted the upload without a media id', res.status, undefined, undefined, false);
  return { id: String(id) };
}

/**
 * GET /{media-id}. With `phoneNumberId` the upstream answers only if the media belongs to that number,
 * which is how the service tells whether a media id may be used by the sending account.
 */
export async function getMedia(businessId: string, mediaId: string, phoneNumberId?: string): Promise<MediaInfo> {
  const q = phoneNumberId ? `?phone_number_id=${encodeURIComponent(phoneNumberId)}` : '';
  const res = await call(businessId, `${base()}/${encodeURIComponent(mediaId)}${q}`, {}, 'get media');
  const body = json(res);
  if (typeof body.url !== 'string') throw new UpstreamError('Upstream answered a media read without its url', res.status, undefined, undefined, false);
  return { id: String(body.id), url: String(body.url), mime_type: String(body.mime_type), sha256: String(body.sha256), file_size: Number(body.file_size) };
}

/** DELETE /{media-id}: the media id stops working upstream (only for `phoneNumberId`'s media, when given). */
export async function deleteMedia(businessId: string, mediaId: string, phoneNumberId?: string): Promise<void> {
  const q = phoneNumberId ? `?phone_number_id=${encodeURIComponent(phoneNumberId)}` : '';
  json(await call(businessId, `${base()}/${encodeURIComponent(mediaId)}${q}`, { method: 'DELETE' }, 'delete media'));
}

/** Downloads media bytes from a URL given by getMedia (the upstream requires the token there too). */
export async function downloadMediaUrl(businessId: string, url: string): Promise<{ bytes: Buffer; mimeType: string }> {
  const res = await call(businessId, url, {}, 'download media');
  return { bytes: res.body, mimeType: res.headers['content-type'] ?? 'application/octet-stream' };
}

export async function downloadMedia(businessId: string, mediaId: string, phoneNumberId?: string): Promise<{ bytes: Buffer; mimeType: string; info: MediaInfo }> {
  const info = await getMedia(businessId, mediaId, phoneNumberId);
  const file = await downloadMediaUrl(businessId, info.url);
  return { ...file, info };
}

/** GET /{waba-id}/message_templates, every page. */
export async function listTemplates(businessId: string, wabaId: string): Promise<UpstreamTemplate[]> {
  const out: UpstreamTemplate[] = [];
  let url: string | undefined = `${base()}/${encodeURIComponent(wabaId)}/message_templates?limit=250`;
  for (let page = 0; url && page < 20; page++) {
    const body = json(await call(businessId, url, {}, 'list templates'));
    for (const t of body.data ?? []) out.push(t as UpstreamTemplate);
    url = typeof body.paging?.next === 'string' ? body.paging.next : undefined;
  }
  return out;
}
