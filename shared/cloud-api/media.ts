/**
 * Media on the Cloud-API-compatible paths: an upload names its MIME type (the Cloud API's `type` form field), the
 * service's upload rules apply to the media kind of that type, and a media id reads and deletes like Meta's.
 */
import { uploadMedia } from '#shared/media/upload-service.ts';
import { deleteMediaRecord, getMedia } from '#shared/media/repository.ts';
import { deleteObject, presignGet } from '#shared/media/storage.ts';
import { upstreamMediaInfo } from '#shared/media/upstream-media.ts';
import type { MediaType } from '#shared/media/formats.ts';
import { unknownObject } from './graph.ts';

/** How long the `url` of a media id answers (Meta's media URLs are also short-lived). */
const URL_SECONDS = 5 * 60;

/** The media kind of a MIME type, as the Cloud API files it (WebP images are stickers). */
export function mediaTypeOfMime(mime: string): MediaType {
  if (mime === 'image/webp') return 'sticker';
  const top = mime.split('/')[0];
  return top === 'image' || top === 'video' || top === 'audio' ? top : 'document';
}

export async function uploadCloudMedia(businessId: string, file: { content: Buffer; filename?: string; mimetype?: string }, declaredType?: string): Promise<{ id: string }> {
  const mime = (declaredType || file.mimetype || 'application/octet-stream').split(';')[0].trim().toLowerCase();
  const uploaded = await uploadMedia(businessId, mediaTypeOfMime(mime), file.content, file.filename);
  return { id: uploaded.media_id };
}

/** `GET /{version}/{media-id}`: the Cloud API's media object, with a short-lived URL of the file. */
export async function cloudMediaInfo(businessId: string, mediaId: string) {
  const record = await getMedia(businessId, mediaId);
  if (!record) throw unknownObject(mediaId, 'GET');
  const upstream = await upstreamMediaInfo(businessId, record.phoneNumberId, mediaId).catch(() => undefined);
  return {
    messaging_product: 'whatsapp',
    url: await presignGet(record.s3Key, URL_SECONDS),
    mime_type: record.mimeType,
    sha256: upstream?.sha256 ?? null,
    file_size: record.fileSize,
    id: mediaId,
  };
}

/** `DELETE /{version}/{media-id}`: the service forgets the id and its file. */
export async function deleteCloudMedia(businessId: string, mediaId: string): Promise<{ success: true }> {
  const record = await getMedia(businessId, mediaId);
  if (!record || !(await deleteMediaRecord(businessId, mediaId))) throw unknownObject(mediaId, 'DELETE');
  await deleteObject(record.s3Key);
  return { success: true };
}
