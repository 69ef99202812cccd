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
 * Meta's answer for an object the number cannot see, whether it does not exist (media expire after 30 days) or belongs
 * to another account: code 100, `GraphMethodException`, subcode 33. Any other refusal (a token, a permission) is not that.
 */
const isUnknownObject = (err: unknown): boolean =>
  err instanceof UpstreamError && err.code === 100 && (err.graph?.error_subcode === 33 || err.graph?.type === 'GraphMethodException');

/**
 * The media id as the number `phoneNumberId` sees it; undefined when it does not exist or belongs to another account.
 * Other refusals and transient faults are thrown.
 */
export async function upstreamMediaInfo(businessId: string, phoneNumberId: string, mediaId: string): Promise<MediaInfo | undefined> {
  try {
    return await getMedia(businessId, mediaId, phoneNumberId);
  } catch (err) {
    if (isUnknownObject(err)) return undefined;
    throw err;
  }
}

/**
 * Deletes the media id from the upstream store of `phoneNumberId`. One the upstream no longer has (media expire there
 * after 30 days) counts as deleted; any other refusal (the delete did not happen) and transient faults are thrown.
 */
export async function deleteFromUpstream(businessId: string, phoneNumberId: string, mediaId: string): Promise<void> {
  try {
    await deleteMedia(businessId, mediaId, phoneNumberId);
  } catch (err) {
    if (isUnknownObject(err)) return;
    throw err;
  }
}
