/**
 * The media bucket: originals of uploads (kept so that a conversion or a re-upload never needs the
 * client again) and the target of presigned uploads. The client (s3-client.ts) is loaded on first use.
 */
import { onFirstUse } from '#shared/lang/on-first-use.ts';
import { requiredEnv } from '#shared/settings/env.ts';

const sdk = onFirstUse(() => import('./s3-client.ts'));

/** Read on every use: a function without MEDIA_BUCKET fails its first media request naming it. */
const bucket = () => requiredEnv('MEDIA_BUCKET');

export const objectKeys = {
  media: (businessId: string, mediaId: string) => `media/${businessId}/${mediaId}`,
  upload: (businessId: string, uploadId: string) => `uploads/${businessId}/${uploadId}`,
};

export async function putObject(key: string, body: Uint8Array, contentType: string): Promise<void> {
  const { s3, PutObjectCommand } = await sdk();
  await s3.send(new PutObjectCommand({ Bucket: bucket(), Key: key, Body: body, ContentType: contentType }));
}

/** Size of an object, or undefined when it does not exist (yet). */
export async function objectSize(key: string): Promise<number | undefined> {
  const { s3, HeadObjectCommand } = await sdk();
  try {
    const head = await s3.send(new HeadObjectCommand({ Bucket: bucket(), Key: key }));
    return head.ContentLength ?? 0;
  } catch (err) {
    const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
    if (status === 404 || (err as Error).name === 'NotFound' || (err as Error).name === 'NoSuchKey') return undefined;
    throw err;
  }
}

export async function getObject(key: string): Promise<Buffer> {
  const { s3, GetObjectCommand } = await sdk();
  const out = await s3.send(new GetObjectCommand({ Bucket: bucket(), Key: key }));
  return Buffer.from(await out.Body!.transformToByteArray());
}

/**
 * A presigned PUT for exactly `contentLength` bytes: the length is part of the signature, so S3 refuses
 * a body of any other size and the type's maximum holds without the bytes passing through a Lambda.
 */
export async function presignPut(key: string, contentType: string, contentLength: number, expiresInSeconds: number): Promise<string> {
  const { s3, PutObjectCommand, getSignedUrl } = await sdk();
  return getSignedUrl(
    s3,
    new PutObjectCommand({ Bucket: bucket(), Key: key, ContentType: contentType, ContentLength: contentLength }),
    { expiresIn: expiresInSeconds, signableHeaders: new Set(['content-type', 'content-length']) },
  );
}

/** A presigned GET of an object (the Cloud-API-compatible media URL). */
export async function presignGet(key: string, expiresInSeconds: number): Promise<string> {
  const { s3, GetObjectCommand, getSignedUrl } = await sdk();
  return getSignedUrl(s3, new GetObjectCommand({ Bucket: bucket(), Key: key }), { expiresIn: expiresInSeconds });
}

export async function deleteObject(key: string): Promise<void> {
  const { s3, DeleteObjectCommand } = await sdk();
  await s3.send(new DeleteObjectCommand({ Bucket: bucket(), Key: key }));
}
