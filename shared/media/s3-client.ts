/**
 * The S3 client, one per container, and what storage.ts sends with it. storage.ts loads it on the first media
 * request (a chunk of its own, see shared/lang/on-first-use.ts), so that a cold start neither
 * parses nor evaluates the S3 client, which alone evaluates more code at load than the whole DynamoDB baseline
 * of the cold-start bench. Errors are told apart by name and status, never by class.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { config } from '#shared/config.ts';

export { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
export { getSignedUrl } from '@aws-sdk/s3-request-presigner';

export const s3 = new S3Client({
  region: config.region,
  endpoint: config.s3Endpoint,
  // The local emulator serves buckets by path, not by virtual host.
  forcePathStyle: Boolean(config.s3Endpoint),
  // The local emulator (s3rver) knows only its own fixed key pair.
  ...(config.s3Endpoint ? { credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } } : {}),
  // Checksums only where S3 requires one. By default the SDK signs a CRC32 into a presigned PUT, computed over the
  // empty body it has when signing, and S3 refuses the client's real bytes against it (the presigned upload).
  requestChecksumCalculation: 'WHEN_REQUIRED',
});
