/**
 * Uploading media: the rules of `POST /media/v1` and of completing a presigned upload. The file's real
 * type comes from its bytes; it must be one of the contract's formats for the declared media type and
 * within the type's maximum. The original is kept in S3, the file goes to the upstream media store of
 * the business's number, and the upstream media id is the media id the client uses in sends.
 */
import { randomUUID } from 'node:crypto';
import { getBusiness } from '#shared/business/repository.ts';
import { detectMime, type Detected } from './detect.ts';
import { extensionOf, MEDIA_RULES, type MediaType } from './formats.ts';
import { messagingNotConfigured, unsupportedFormat, uploadTooLarge } from './errors.ts';
import { fileSha256, newExpiry, putMedia } from './repository.ts';
import { objectKeys, putObject } from './storage.ts';
import { uploadToUpstream } from './upstream-media.ts';

/** The contract's Uploaded media result. */
export interface UploadedMedia {
  media_id: string;
  mime_type: string;
  file_size: number;
  type: MediaType;
}

/** The sending number of a business, or a clear 400 when the business has none. */
export async function sendingNumber(businessId: string): Promise<string> {
  const business = await getBusiness(businessId);
  if (!business?.phoneNumberId) throw messagingNotConfigured();
  return business.phoneNumberId;
}

/** Checks size and real format of a file for `type`; returns what the bytes are. */
export async function checkMediaFile(type: MediaType, bytes: Uint8Array, filename?: string): Promise<Detected> {
  const rule = MEDIA_RULES[type];
  // Size first: it needs no parsing and is the more useful answer for a big file of any kind.
  if (bytes.length > rule.maxBytes) throw uploadTooLarge(type, bytes.length);
  if (bytes.length === 0) throw unsupportedFormat(type, undefined, 'The file is empty');
  const detected = await detectMime(bytes, filename);
  if (!detected || !rule.mimeTypes.includes(detected.mime)) throw unsupportedFormat(type, detected?.mime);
  if (detected.mime === 'audio/ogg' && !detected.opus) {
    throw unsupportedFormat(type, 'audio/ogg', 'This OGG file is not Opus-encoded; only OGG with the Opus codec is accepted');
  }
  return detected;
}

export interface StoreInput {
  type: MediaType;
  bytes: Uint8Array;
  mimeType: string;
  filename?: string;
}

/** Uploads checked bytes to the upstream media store, records the media id (valid about 30 days) and keeps the original. */
export async function storeMedia(businessId: string, phoneNumberId: string, input: StoreInput): Promise<UploadedMedia> {
  const filename = input.filename || `${input.type}.${extensionOf(input.mimeType)}`;
  const s3Key = objectKeys.media(businessId, randomUUID());
  const [mediaId] = await Promise.all([
    uploadToUpstream(businessId, phoneNumberId, input.bytes, input.mimeType, filename),
    putObject(s3Key, input.bytes, input.mimeType),
  ]);
  await putMedia({
    businessId,
    mediaId,
    phoneNumberId,
    type: input.type,
    mimeType: input.mimeType,
    fileSize: input.bytes.length,
    filename,
    s3Key,
    sha256: fileSha256(input.bytes),
    createdAt: new Date().toISOString(),
    expiresAt: newExpiry(),
  });
  return { media_id: mediaId, mime_type: input.mimeType, file_size: input.bytes.length, type: input.type };
}

/** `POST /media/v1`: check, then store. */
export async function uploadMedia(businessId: string, type: MediaType, bytes: Uint8Array, filename?: string): Promise<UploadedMedia> {
  const phoneNumberId = await sendingNumber(businessId);
  const detected = await checkMediaFile(type, bytes, filename);
  return storeMedia(businessId, phoneNumberId, { type, bytes, mimeType: detected.mime, filename });
}
