/**
 * Media items of the single table: uploaded media (keyed by the media id the client uses), presigned
 * uploads waiting for their bytes, and media jobs (a send's proxy/conversion work and its outcome).
 */
import { createHash } from 'node:crypto';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';
import { isConditionFailure } from '#shared/store/conditional.ts';
import type { MediaType } from './formats.ts';

const DAY = 24 * 3600 * 1000;
/** Contract: a media id is valid for about 30 days. */
export const MEDIA_VALIDITY_MS = 30 * DAY;
/** Expired records stay readable a while longer, so that an expired id is told apart from an unknown one. */
const EXPIRED_GRACE_MS = 30 * DAY;

const epochSeconds = (ms: number) => Math.floor(ms / 1000);

export interface MediaRecord {
  businessId: string;
  mediaId: string;
  phoneNumberId: string;
  type: MediaType;
  mimeType: string;
  fileSize: number;
  filename?: string;
  s3Key: string;
  /** Hex SHA-256 of the file, as the Cloud API's media object gives it (none on records made before 2026-11-29). */
  sha256?: string;
  createdAt: string;
  expiresAt: string;
}

/** The SHA-256 a media record carries. */
export const fileSha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

export async function putMedia(record: MediaRecord): Promise<void> {
  await db.send(new PutCommand({
    TableName: table(),
    Item: { ...keys.media(record.businessId, record.mediaId), ...record, type: 'media', mediaType: record.type, ttl: epochSeconds(Date.parse(record.expiresAt) + EXPIRED_GRACE_MS) },
  }));
}

export async function getMedia(businessId: string, mediaId: string): Promise<MediaRecord | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: table(), Key: keys.media(businessId, mediaId) }));
  if (!Item) return undefined;
  return { ...(Item as MediaRecord), type: Item.mediaType as MediaType };
}

/** Forgets a media id of the business; false when it had none of that id. */
export async function deleteMediaRecord(businessId: string, mediaId: string): Promise<boolean> {
  const { Attributes } = await db.send(new DeleteCommand({ TableName: table(), Key: keys.media(businessId, mediaId), ReturnValues: 'ALL_OLD' }));
  return Attributes !== undefined;
}

export interface UploadRecord {
  businessId: string;
  uploadId: string;
  type: MediaType;
  mimeType: string;
  fileSize: number;
  filename?: string;
  s3Key: string;
  status: 'pending' | 'completed';
  createdAt: string;
  expiresAt: string;
  /** Set once completed: completing again answers the same media. */
  mediaId?: string;
  /** While a request completes it (epoch ms): others wait for its outcome. */
  completingUntil?: number;
}

export async function putUpload(record: UploadRecord): Promise<void> {
  await db.send(new PutCommand({
    TableName: table(),
    Item: { ...keys.mediaUpload(record.businessId, record.uploadId), ...record, type: 'mediaUpload', mediaType: record.type, ttl: epochSeconds(Date.parse(record.expiresAt) + DAY) },
  }));
}

export async function getUpload(businessId: string, uploadId: string): Promise<UploadRecord | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: table(), Key: keys.mediaUpload(businessId, uploadId) }));
  if (!Item) return undefined;
  return { ...(Item as UploadRecord), type: Item.mediaType as MediaType };
}

export async function markUploadCompleted(businessId: string, uploadId: string, mediaId: string): Promise<void> {
  await db.send(new UpdateCommand({
    TableName: table(),
    Key: keys.mediaUpload(businessId, uploadId),
    UpdateExpression: 'SET #s = :done, mediaId = :m REMOVE completingUntil',
    ExpressionAttributeNames: { '#s': 'status' },
    ExpressionAttributeValues: { ':done': 'completed', ':m': mediaId },
  }));
}

/**
 * Takes the completion of a pending upload for `leaseMs`, so that one request at a time turns it into media; false
 * when another request holds it (a holder that died lets go when its lease ends).
 */
export async function claimUploadCompletion(businessId: string, uploadId: string, leaseMs: number): Promise<boolean> {
  const now = Date.now();
  try {
    await db.send(new UpdateCommand({
      TableName: table(),
      Key: keys.mediaUpload(businessId, uploadId),
      UpdateExpression: 'SET completingUntil = :until',
      ConditionExpression: '#s = :pending AND (attribute_not_exists(completingUntil) OR completingUntil < :now)',
      ExpressionAttributeNames: { '#s': 'status' },
      ExpressionAttributeValues: { ':pending': 'pending', ':until': now + leaseMs, ':now': now },
    }));
    return true;
  } catch (err) {
    if (isConditionFailure(err)) return false;
    throw err;
  }
}

/** Lets go of a completion that failed (the client may PUT the file and complete again). */
export async function releaseUploadCompletion(businessId: string, uploadId: string): Promise<void> {
  await db.send(new UpdateCommand({
    TableName: table(),
    Key: keys.mediaUpload(businessId, uploadId),
    UpdateExpression: 'REMOVE completingUntil',
    ConditionExpression: 'attribute_exists(completingUntil)',
  })).catch((err) => {
    if (!isConditionFailure(err)) throw err;
  });
}

export const newExpiry = (now = Date.now()) => new Date(now + MEDIA_VALIDITY_MS).toISOString();
