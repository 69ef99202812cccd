/** A local S3 (s3rver) with the media bucket, for `npm start` and the tests. */
import { createRequire } from 'node:module';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const require = createRequire(import.meta.url);
const S3rver = require('s3rver');

export interface LocalS3 {
  endpoint: string;
  stop: () => Promise<void>;
}

export async function startS3(port: number, bucket: string, directory?: string): Promise<LocalS3> {
  const server = new S3rver({
    port,
    address: '127.0.0.1',
    silent: true,
    directory: directory ?? mkdtempSync(join(tmpdir(), 's3rver-')),
    configureBuckets: [{ name: bucket }],
    allowMismatchedSignatures: true,
  });
  const info = await server.run();
  return { endpoint: `http://127.0.0.1:${info.port}`, stop: () => server.close() };
}
