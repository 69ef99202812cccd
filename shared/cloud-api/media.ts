/**
 * Media on the Cloud-API-compatible paths: an upload's media kind follows its bytes (what they are, whatever the
 * form's `type` or the part says: Meta's own examples send `type=ogg`), and the service's upload rules apply to it;
 * a media id reads and deletes like Meta's, also only for the phone number a `phone_number_id` names. That includes
 * the ids in customers' messages, which the service did not upload: the upstream store of the business's number has
 * them, and a read fetches the file from there once and keeps it as it keeps an upload.
 */
import { randomUUID } from 'node:crypto';
import { uploadMedia } from '#shared/media/upload-service.ts';
import { deleteMediaRecord, fileSha256, getMedia, newExpiry, putMedia, type MediaRecord } from '#shared/media/repository.ts';
import { deleteObject, objectKeys, presignGet, putObject } from '#shared/media/storage.ts';
import { deleteFromUpstream, upstreamMediaInfo } from '#shared/media/upstream-media.ts';
import { MEDIA_RULES, type MediaType } from '#shared/media/formats.ts';
import { detectMime } from '#shared/media/detect.ts';
import { fileLink } from '#shared/media/file-links.ts';
import { getBusiness } from '#shared/business/repository.ts';
import { downloadMediaUrl, type MediaInfo } from '#shared/upstream/client.ts';
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
  const detected = await detectMime(file.content, file.filename);
  const mime = (detected?.mime || declaredType || file.mimetype || 'application/octet-stream').split(';')[0].trim().toLowerCase();
  // Meta's upload does not say what a WebP is for: one over a sticker's limit is taken as an image (up to 5 MB), and a
  // send of it as a sticker is refused then (shared/media/send-media.ts).
  const kind = mediaTypeOfMime(mime);
  const type = kind === 'sticker' && file.content.length > MEDIA_RULES.sticker.maxBytes ? 'image' : kind;
  const uploaded = await uploadMedia(businessId, type, file.content, file.filename);
  return { id: uploaded.media_id };
}

/** The business's media record of `mediaId`, when it belongs to the phone number asked about (if one is). */
async function ownRecord(businessId: string, mediaId: string, phoneNumberId: string | undefined): Promise<MediaRecord | undefined> {
  const record = await getMedia(businessId, mediaId);
  return record && (phoneNumberId === undefined || record.phoneNumberId === phoneNumberId) ? record : undefined;
}

/** A media id the service did not upload, as the upstream store of the business's number (the one asked about) has it. */
async function upstreamOnly(businessId: string, mediaId: string, phoneNumberId: string | undefined): Promise<{ phoneNumberId: string; info: MediaInfo } | undefined> {
  const number = (await getBusiness(businessId))?.phoneNumberId;
  if (!number || (phoneNumberId !== undefined && phoneNumberId !== number)) return undefined;
  const info = await upstreamMediaInfo(businessId, number, mediaId);
  return info && { phoneNumberId: number, info };
}

/** Fetches a media file of the upstream store once and keeps it as an upload is kept (the same 30 days). */
async function keepFromUpstream(businessId: string, mediaId: string, found: { phoneNumberId: string; info: MediaInfo }): Promise<MediaRecord> {
  const { bytes, mimeType } = await downloadMediaUrl(businessId, found.info.url);
  const mime = (found.info.mime_type || mimeType).split(';')[0].trim().toLowerCase();
  const s3Key = objectKeys.media(businessId, randomUUID());
  await putObject(s3Key, bytes, mime);
  const record: MediaRecord = {
    businessId,
    mediaId,
    phoneNumberId: found.phoneNumberId,
    type: mediaTypeOfMime(mime),
    mimeType: mime,
    fileSize: bytes.length,
    s3Key,
    sha256: fileSha256(bytes),
    createdAt: new Date().toISOString(),
    expiresAt: newExpiry(),
  };
  await putMedia(record);
  return record;
}

/**
 * `GET /{version}/{media-id}`: the Cloud API's media object, with a short-lived URL of the file: on the service's own
 * host when the request says which (`baseUrl`), so that it downloads with the access token as Meta's does.
 */
export async function cloudMediaInfo(businessId: string, mediaId: string, phoneNumberId?: string, baseUrl?: string) {
  let record = await ownRecord(businessId, mediaId, phoneNumberId);
  if (!record) {
    const found = await upstreamOnly(businessId, mediaId, phoneNumberId);
    if (!found) throw unknownObject(mediaId, 'GET');
    record = await keepFromUpstream(businessId, mediaId, found);
  }
  const [info, presigned] = await Promise.all([
    // Records carry their file's hash; an older one asks the upstream.
    record.sha256 ? undefined : upstreamMediaInfo(businessId, record.phoneNumberId, mediaId).catch(() => undefined),
    presignGet(record.s3Key, URL_SECONDS),
  ]);
  return {
    messaging_product: 'whatsapp',
    url: baseUrl ? fileLink(baseUrl, presigned) : presigned,
    mime_type: record.mimeType,
    sha256: record.sha256 ?? info?.sha256 ?? null,
    // A string in Meta's schema.
    file_size: String(record.fileSize),
    id: mediaId,
  };
}

/**
 * `DELETE /{version}/{media-id}`: as Meta's, the id stops working for sends (it is deleted upstream first, so a failure
 * there leaves everything as it was, to be asked again); then the service forgets the id and its file.
 */
export async function deleteCloudMedia(businessId: string, mediaId: string, phoneNumberId?: string): Promise<{ success: true }> {
  const record = await ownRecord(businessId, mediaId, phoneNumberId);
  if (!record) {
    const found = await upstreamOnly(businessId, mediaId, phoneNumberId);
    if (!found) throw unknownObject(mediaId, 'DELETE');
    await deleteFromUpstream(businessId, found.phoneNumberId, mediaId);
    return { success: true };
  }
  await deleteFromUpstream(businessId, record.phoneNumberId, mediaId);
  if (!(await deleteMediaRecord(businessId, mediaId))) throw unknownObject(mediaId, 'DELETE');
  await deleteObject(record.s3Key);
  return { success: true };
}
