/**
 * Media a message names inside its other objects, where the upstream fetches or looks it up itself: a template's
 * header and carousel cards, an interactive message's header and cards. The same rules as a media message's own file:
 * an id must be one the sending number may use (403 `MEDIA_PERMISSION_DENIED` with a hint for another number's or
 * account's) and, when this service uploaded it, of the kind it is named as and within that kind's limit; a link must be
 * http(s) and must not name a loopback, private or metadata address (400 `invalid_media_link`), told without a request,
 * since the service does not fetch it.
 */
import { requireAccessibleMediaId, requireUsableAs } from './media-id.ts';
import { invalidLink } from './link-probe.ts';
import type { MediaType } from './formats.ts';
import { checkAddress, isIpLiteral } from '#shared/net/address-policy.ts';
import { config } from '#shared/config.ts';

/** The media kinds a message names files under, and the kind each file must be (a template's GIF header is an MP4 video). */
const MEDIA_KEYS = new Map<string, MediaType>([['image', 'image'], ['video', 'video'], ['audio', 'audio'], ['document', 'document'], ['sticker', 'sticker'], ['gif', 'video']]);

interface EmbeddedMedia {
  type: MediaType;
  media: { id?: unknown; link?: unknown };
}

/** Every object under a media kind's key (`image: { id }`, `video: { link }`...), at any depth of `value`. */
function embeddedMedia(value: unknown, found: EmbeddedMedia[] = []): EmbeddedMedia[] {
  if (Array.isArray(value)) {
    for (const item of value) embeddedMedia(item, found);
  } else if (value !== null && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      const type = MEDIA_KEYS.get(key);
      if (type && inner !== null && typeof inner === 'object' && !Array.isArray(inner)) found.push({ type, media: inner });
      else embeddedMedia(inner, found);
    }
  }
  return found;
}

/** Checks every media id and link `value` names for a send from `phoneNumberId` (see the module's comment). */
export async function requireSendableEmbeddedMedia(businessId: string, phoneNumberId: string, value: unknown): Promise<void> {
  await Promise.all(embeddedMedia(value).map(async ({ type, media }) => {
    if (typeof media.id === 'string') {
      const check = await requireAccessibleMediaId(businessId, phoneNumberId, media.id);
      if (check.known) requireUsableAs(type, media.id, check.record);
    } else if (typeof media.link === 'string') {
      checkForwardedLink(media.link);
    }
  }));
}

/** `localhost` and its subdomains name the loopback interface without a DNS answer (RFC 6761). */
const LOOPBACK_NAME = /(^|\.)localhost\.?$/i;

/**
 * A link the upstream will fetch: refused when it is not http(s), or when its host is a literal address (or
 * `localhost`) no one should be sent to.
 */
function checkForwardedLink(link: string): void {
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    throw invalidLink(link, 'not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalidLink(link, 'only http and https links can be fetched');
  const host = LOOPBACK_NAME.test(url.hostname) ? '127.0.0.1' : url.hostname;
  if (!isIpLiteral(host)) return;
  const verdict = checkAddress(host, config.allowPrivateNetworkTargets);
  if (!verdict.allowed) throw invalidLink(link, LOOPBACK_NAME.test(url.hostname) ? `${url.hostname} names the loopback interface` : verdict.reason);
}
