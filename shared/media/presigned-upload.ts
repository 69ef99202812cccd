/**
 * The large-file path. API Gateway and Lambda cap a request at about 6 MB, so a bigger file (up to the
 * type's maximum, 100 MB for documents) goes straight to S3 with a presigned PUT, and completing the
 * upload runs the same checks as `POST /media/v1` on the stored object and yields the same media id.
 */
import { randomUUID } from 'node:crypto';
import { ApiError, notFound } from '#shared/http/errors.ts';
import { MEDIA_RULES, type MediaType } from './formats.ts';
import { uploadTooLarge } from './errors.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { claimUploadCompletion, getMedia, getUpload, markUploadCompleted, putUpload, releaseUploadCompletion, type UploadRecord } from './repository.ts';
import { deleteObject, getObject, objectKeys, objectSize, presignPut } from './storage.ts';
import { logger } from '#shared/log/logger.ts';
import { checkMediaFile, sendingNumber, storeMedia, type UploadedMedia } from './upload-service.ts';

/** How long the presigned URL accepts the PUT. */
const URL_VALIDITY_SECONDS = 15 * 60;
/** How long an upload can be completed after it was created. */
const UPLOAD_VALIDITY_MS = 60 * 60 * 1000;
/** Longer than a completion can run (the function's 29 s): a holder that died lets go after it. */
const COMPLETION_LEASE_MS = 60_000;
/** How long a request waits for another one completing the same upload, within the function's 29 s. */
const COMPLETION_WAIT_MS = 20_000;

export interface CreateUploadInput {
  type: MediaType;
  file_size: number;
  mime_type?: string;
  filename?: string;
}

export interface PresignedUpload {
  upload_id: string;
  upload_url: string;
  method: 'PUT';
  /** Headers the PUT must carry exactly (both are signed). */
  headers: Record<string, string>;
  expires_at: string;
  max_bytes: number;
  complete_url: string;
}

export async function createUpload(businessId: string, input: CreateUploadInput): Promise<PresignedUpload> {
  await sendingNumber(businessId);
  if (input.file_size > MEDIA_RULES[input.type].maxBytes) throw uploadTooLarge(input.type, input.file_size);
  const uploadId = randomUUID();
  const s3Key = objectKeys.upload(businessId, uploadId);
  const contentType = input.mime_type || 'application/octet-stream';
  const now = Date.now();
  const url = await presignPut(s3Key, contentType, input.file_size, URL_VALIDITY_SECONDS);
  await putUpload({
    businessId,
    uploadId,
    type: input.type,
    mimeType: contentType,
    fileSize: input.file_size,
    filename: input.filename,
    s3Key,
    status: 'pending',
    createdAt: new Date(now).toISOString(),
    expiresAt: new Date(now + UPLOAD_VALIDITY_MS).toISOString(),
  });
  return {
    upload_id: uploadId,
    upload_url: url,
    method: 'PUT',
    headers: { 'content-type': contentType, 'content-length': String(input.file_size) },
    expires_at: new Date(now + URL_VALIDITY_SECONDS * 1000).toISOString(),
    max_bytes: MEDIA_RULES[input.type].maxBytes,
    complete_url: `/media/v1/uploads/${uploadId}/complete`,
  };
}

/**
 * Turns an uploaded file into media, once: concurrent completions of one upload wait for the one that took it and
 * answer its media (409 `upload_in_progress` if it runs past the wait), as a second completion afterwards does.
 */
export async function completeUpload(businessId: string, uploadId: string): Promise<UploadedMedia> {
  const giveUpAt = Date.now() + COMPLETION_WAIT_MS;
  for (;;) {
    const upload = await getUpload(businessId, uploadId);
    if (!upload) throw notFound(`Upload ${uploadId} not found`);
    if (upload.status === 'completed' && upload.mediaId) {
      // Completing twice answers the same media instead of uploading the file again.
      const media = await getMedia(businessId, upload.mediaId);
      if (media) return { media_id: media.mediaId, mime_type: media.mimeType, file_size: media.fileSize, type: media.type };
    }
    if (Date.parse(upload.expiresAt) < Date.now()) {
      throw new ApiError(400, { error: 'upload_expired', message: `Upload ${uploadId} expired at ${upload.expiresAt}; create a new upload` });
    }
    if (await claimUploadCompletion(businessId, uploadId, COMPLETION_LEASE_MS)) {
      try {
        return await finishUpload(businessId, upload);
      } catch (err) {
        await releaseUploadCompletion(businessId, uploadId);
        throw err;
      }
    }
    if (Date.now() > giveUpAt) {
      throw new ApiError(409, { error: 'upload_in_progress', message: `Another request is completing upload ${uploadId}; complete it again shortly for its media` });
    }
    await sleep(200);
  }
}

/** The checks of `POST /media/v1` on the stored object, then the media. */
async function finishUpload(businessId: string, upload: UploadRecord): Promise<UploadedMedia> {
  const phoneNumberId = await sendingNumber(businessId);
  const size = await objectSize(upload.s3Key);
  if (size === undefined) {
    throw new ApiError(400, { error: 'upload_incomplete', message: `No file has been uploaded for ${upload.uploadId}: PUT the file to upload_url first` });
  }
  if (size > MEDIA_RULES[upload.type].maxBytes) throw uploadTooLarge(upload.type, size);
  const bytes = await getObject(upload.s3Key);
  const detected = await checkMediaFile(upload.type, bytes, upload.filename);
  // The media keeps the bytes checked here, in an object of its own: the upload's URL still takes PUTs until it
  // expires, and a file put there after this check must not become what the media id serves or converts.
  const media = await storeMedia(businessId, phoneNumberId, { type: upload.type, bytes, mimeType: detected.mime, filename: upload.filename });
  await markUploadCompleted(businessId, upload.uploadId, media.media_id);
  await deleteObject(upload.s3Key).catch((err: unknown) => logger.warn('upload object left for the bucket lifecycle', { businessId, uploadId: upload.uploadId, error: (err as Error).message }));
  return media;
}
