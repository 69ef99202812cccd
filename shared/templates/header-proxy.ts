/**
 * The contract's proxy rule for a template's header media: when the upstream cannot download the header's link
 * (131052), the service downloads it itself (SSRF-safe, at most the 5 MB proxy limit), uploads it to the upstream
 * media store and sends the header by id, as it does for a media message. The send path loads this module only
 * when such an error comes back.
 */
import type { OutboundDraft } from '#shared/messages/draft.ts';
import type { Dispatch } from '#shared/messages/dispatch.ts';
import type { Outcome } from '#shared/messages/idempotency.ts';
import type { UpstreamError } from '#shared/upstream/client.ts';
import { logger } from '#shared/log/logger.ts';
import { safeFetch } from '#shared/net/safe-fetch.ts';
import { detectMime } from '#shared/media/detect.ts';
import { PROXY_LIMIT_BYTES } from '#shared/media/formats.ts';
import { storeMedia } from '#shared/media/upload-service.ts';

const HEADER_MEDIA = new Set(['image', 'video', 'document']);
const DOWNLOAD_TIMEOUT_MS = 20_000;

/** The header's media parameter when it is a link: `{ type, image: { link } }` and the like. */
function headerLink(draft: OutboundDraft): { param: Record<string, any>; type: 'image' | 'video' | 'document'; link: string } | undefined {
  const components = (draft.payload.template as { components?: Record<string, any>[] } | undefined)?.components ?? [];
  const param = components.find((c) => c?.type === 'header')?.parameters?.[0];
  const type = param?.type;
  const link = HEADER_MEDIA.has(type) ? param[type]?.link : undefined;
  return typeof link === 'string' ? { param, type, link } : undefined;
}

/** Answers a 131052 on a template with a header link by sending the header by id; undefined leaves the upstream's answer. */
export async function proxyHeaderLink(draft: OutboundDraft, err: UpstreamError, dispatch: Dispatch): Promise<Outcome | undefined> {
  const header = err.code === 131052 ? headerLink(draft) : undefined;
  if (!header) return undefined;
  try {
    const res = await safeFetch(header.link, { maxBytes: PROXY_LIMIT_BYTES, followRedirects: 5, timeoutMs: DOWNLOAD_TIMEOUT_MS });
    if (res.status < 200 || res.status >= 300) return undefined;
    const mimeType = (await detectMime(res.body))?.mime ?? res.headers['content-type']?.split(';')[0] ?? 'application/octet-stream';
    const stored = await storeMedia(draft.businessId, draft.phoneNumberId, { type: header.type, bytes: res.body, mimeType });
    const { link: _link, ...rest } = header.param[header.type];
    header.param[header.type] = { ...rest, id: stored.media_id };
  } catch (failure) {
    // The file cannot be fetched here either (too large, unreachable, blocked): the upstream's 131052 stands.
    logger.warn('template header media not proxied', { error: failure as Error });
    return undefined;
  }
  return dispatch(draft);
}
