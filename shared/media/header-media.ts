/**
 * Template `header_media` (shortcut form 2): `{ type, url | media_id }` → the header parameter of the
 * upstream template. A media id placed in `url` is treated as a media id; a media id must be accessible
 * to the sending number, else `MEDIA_PERMISSION_DENIED` with a hint.
 */
import { ApiError } from '#shared/http/errors.ts';
import { checkAddress } from '#shared/net/address-policy.ts';
import { config } from '#shared/config.ts';
import { looksLikeMediaId, requireAccessibleMediaId } from './media-id.ts';

export interface HeaderMediaInput {
  type: 'image' | 'video' | 'document';
  url?: string;
  media_id?: string;
  filename?: string;
}

/** `{ type: 'header', parameters: [{ type, <type>: { id } | { link } }] }` */
export interface HeaderComponent {
  type: 'header';
  parameters: { type: HeaderMediaInput['type']; [key: string]: unknown }[];
}

export async function resolveHeaderMedia(businessId: string, phoneNumberId: string, header: HeaderMediaInput): Promise<HeaderComponent> {
  const url = header.url?.trim();
  const mediaId = header.media_id?.trim() || (url && looksLikeMediaId(url) ? url : undefined);
  const object: Record<string, unknown> = {};
  if (mediaId) {
    await requireAccessibleMediaId(businessId, phoneNumberId, mediaId);
    object.id = mediaId;
  } else if (url) {
    object.link = checkedLink(url);
  } else {
    throw new ApiError(400, { error: 'validation_error', message: 'header_media needs url or media_id', details: { header_media: ['needs url or media_id'] } });
  }
  if (header.type === 'document' && header.filename) object.filename = header.filename;
  return { type: 'header', parameters: [{ type: header.type, [header.type]: object }] };
}

/** A header link must be a public http(s) URL (the upstream fetches it); literal private addresses are refused early. */
function checkedLink(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ApiError(400, { error: 'validation_error', message: 'header_media.url must be a URL or a media id', details: { 'header_media.url': ['must be an http(s) URL or a media id'] } });
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ApiError(400, { error: 'validation_error', message: 'header_media.url must be an http(s) URL', details: { 'header_media.url': ['must be an http(s) URL'] } });
  }
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  if (/^[\d.]+$|:/.test(host) && !checkAddress(host, config.allowPrivateNetworkTargets).allowed) {
    throw new ApiError(400, { error: 'invalid_media_link', message: `header_media.url points to a non-public address (${host})` });
  }
  return url;
}
