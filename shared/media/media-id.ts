/**
 * Media ids in sends. An id uploaded through this service is checked against its record (expired ids
 * get a clear 400); an id the service does not know may still be the sending number's own upstream
 * upload, which only the upstream can confirm.
 */
import { mediaExpired, mediaPermissionDenied, mediaTooLarge, unsupportedFormat } from './errors.ts';
import { MEDIA_RULES, type MediaType } from './formats.ts';
import { getMedia, type MediaRecord } from './repository.ts';
import { upstreamMediaInfo } from './upstream-media.ts';
import { UpstreamError } from '#shared/upstream/client.ts';

export type MediaIdCheck = { known: true; record: MediaRecord } | { known: false };

/** Looks the id up for the business; throws `media_expired` for an expired one. */
export async function checkMediaId(businessId: string, mediaId: string, now = Date.now()): Promise<MediaIdCheck> {
  const record = await getMedia(businessId, mediaId);
  if (!record) return { known: false };
  if (Date.parse(record.expiresAt) <= now) throw mediaExpired(mediaId, record.expiresAt);
  return { known: true, record };
}

/**
 * A media id the sending number may use: this business's upload (not expired), or an upstream media
 * item of the same number. Anything else is `MEDIA_PERMISSION_DENIED` with a hint: an id the upstream does not know
 * for the number, and one it refuses to show the number (a permission or token refusal, the contract's "not accessible
 * with the sending credentials"). A transient fault is thrown.
 */
export async function requireAccessibleMediaId(businessId: string, phoneNumberId: string, mediaId: string): Promise<MediaIdCheck> {
  const check = await checkMediaId(businessId, mediaId);
  if (check.known) {
    if (check.record.phoneNumberId !== phoneNumberId) throw mediaPermissionDenied(mediaId);
    return check;
  }
  const visible = await upstreamMediaInfo(businessId, phoneNumberId, mediaId).catch((err: unknown) => {
    if (err instanceof UpstreamError && !err.transient) return undefined;
    throw err;
  });
  if (visible) return check;
  throw mediaPermissionDenied(mediaId);
}

/**
 * An uploaded file sent as `type`: one of another kind (a video id sent as an image, a JPEG as a sticker) is refused
 * here, as the upstream would refuse it after the send, and so is one over the limit of the kind it is sent as (a
 * 1 MB WebP image as a sticker), as by link without autoConvert. A document takes any file the service stored.
 */
export function requireUsableAs(type: MediaType, mediaId: string, record: MediaRecord): void {
  if (type !== 'document' && !MEDIA_RULES[type].mimeTypes.includes(record.mimeType)) {
    throw unsupportedFormat(type, record.mimeType, `Media id ${mediaId} is ${record.mimeType}, uploaded as ${record.type}`);
  }
  if (record.fileSize > MEDIA_RULES[type].maxBytes) throw mediaTooLarge(type, record.fileSize);
}
