/**
 * What the media tests need around the handlers: a local S3 and the upstream sandbox (the stand-in for
 * the real WhatsApp API), started before any service module reads shared/config.ts, and a way to call
 * an endpoint with a binary multipart body as API Gateway delivers it (base64).
 */
import { TEST_UPSTREAM } from '../../support/upstream-secret.ts';

export interface MediaHarness {
  sandbox: { url: string; state: any; close(): Promise<void> };
  stop(): Promise<void>;
}

export async function startMediaHarness(): Promise<MediaHarness> {
  const { startS3 } = await import('#infra/local/s3.ts');
  const { startSandbox } = await import('#infra/local/sandbox/server.ts');
  const bucket = 'wa-crm-media-test';
  const s3 = await startS3(0, bucket);
  const sandbox = await startSandbox({ port: 0, serviceWebhookUrl: 'http://127.0.0.1:9/unused', appSecret: TEST_UPSTREAM.appSecret, accessToken: TEST_UPSTREAM.token });
  Object.assign(process.env, { S3_ENDPOINT: s3.endpoint, MEDIA_BUCKET: bucket, UPSTREAM_BASE_URL: sandbox.url, UPSTREAM_MAX_ATTEMPTS: '1' });
  return {
    sandbox,
    stop: async () => {
      await sandbox.close();
      await s3.stop();
    },
  };
}

/** Calls the upload handler with a multipart form built by the platform's FormData, base64-encoded like API Gateway does. */
export async function invokeMultipart(
  apiKey: string,
  fields: Record<string, string>,
  file?: { bytes: Uint8Array; filename?: string; mimeType?: string },
): Promise<{ status: number; body: any }> {
  const form = new FormData();
  for (const [k, val] of Object.entries(fields)) form.set(k, val);
  if (file) form.set('file', new Blob([file.bytes as Uint8Array<ArrayBuffer>], { type: file.mimeType ?? 'application/octet-stream' }), file.filename ?? 'upload.bin');
  const request = new Request('http://local/media/v1', { method: 'POST', body: form });
  const raw = Buffer.from(await request.arrayBuffer());
  return invokeRaw('POST /media/v1', apiKey, raw, request.headers.get('content-type')!);
}

/** Calls `routeKey` with a binary body as API Gateway delivers it (base64), through the tests' `invoke`. */
export async function invokeRaw(routeKey: string, apiKey: string, raw: Buffer, contentType: string, params?: Record<string, string>) {
  const { invoke } = await import('../../support/api.ts');
  return invoke(routeKey, { apiKey, headers: { 'content-type': contentType }, binaryBody: raw, params });
}

export interface ServedFile {
  bytes?: Buffer;
  /** Announce this length on HEAD without holding the bytes (for sizes only the plan looks at). */
  size?: number;
  contentType?: string;
  /** Answer a GET only after this long (a slow origin). */
  delayMs?: number;
}

/** A loopback HTTP server for media links (reachable because tests allow private targets). */
export async function serveFiles(files: Record<string, ServedFile>) {
  const http = await import('node:http');
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    const path = new URL(req.url!, 'http://x').pathname;
    hits.push(`${req.method} ${path}`);
    const file = files[path];
    if (!file) return void res.writeHead(404).end();
    const length = file.bytes?.length ?? file.size ?? 0;
    res.writeHead(200, { 'content-type': file.contentType ?? 'application/octet-stream', 'content-length': String(length) });
    if (req.method === 'HEAD' || !file.bytes) return void res.end();
    setTimeout(() => res.end(file.bytes), file.delayMs ?? 0);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    hits,
    files,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
