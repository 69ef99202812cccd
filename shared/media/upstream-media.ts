/**
 * The upstream media calls the media area needs, on the upstream client: upload a file to the sending number's
 * media store, ask whether a media id is accessible to a number, and delete one.
 */
import { deleteMedia, getMedia, uploadMedia, UpstreamError, type MediaInfo } from '#shared/upstream/client.ts';

/** Uploads bytes to the upstream media store of the business's `phoneNumberId`; returns the upstream media id. */
export async function uploadToUpstream(businessId: string, phoneNumberId: string, bytes: Uint8Array, mimeType: string, filename: string): Promise<string> {
  return (await uploadMedia(businessId, phoneNumberId, { bytes, mimeType, filename })).id;
}

/**
 * The media id as the number `phoneNumberId` sees it; undefined when it does not exist or belongs to
 * another account (the upstream answers both with a permanent error). Transient faults are thrown.
 */
export async function upstreamMediaInfo(businessId: string, phoneNumberId: string, mediaId: string): Promise<MediaInfo | undefined> {
  try {
    return await getMedia(businessId, mediaId, phoneNumberId);
  } catch (err) {
    if (err instanceof UpstreamError && !err.transient) return undefined;
    throw err;
  }
}

/**
 * Deletes the media id from the upstream store of `phoneNumberId`. One the upstream no longer has (media expire there
 * after 30 days) counts as deleted; transient faults are thrown.
 */
export async function deleteFromUpstream(businessId: string, phoneNumberId: string, mediaId: string): Promise<void> {
  try {
    await deleteMedia(businessId, mediaId, phoneNumberId);
  } catch (err) {
    if (err instanceof UpstreamError && !err.transient) return;
    throw err;
  }
}
