/** The large-file path: POST /media/v1/uploads → PUT to S3 → POST /media/v1/uploads/{id}/complete. */
import { createHash, randomUUID } from 'node:crypto';
import { startMediaHarness, type MediaHarness } from './harness.ts';
import { noisePng, smallPng, tinyPdf } from './files.ts';

let harness: MediaHarness;
let api: typeof import('../../support/api.ts');
let tenant: Awaited<ReturnType<typeof api.newTenant>>;

beforeAll(async () => {
  harness = await startMediaHarness();
  api = await import('../../support/api.ts');
  tenant = await api.newTenant();
});

afterAll(async () => harness.stop());

const create = (body: unknown) => api.invoke('POST /media/v1/uploads', { apiKey: tenant.apiKey, body });
const complete = (id: string) => api.invoke('POST /media/v1/uploads/{id}/complete', { apiKey: tenant.apiKey, params: { id } });
const put = (upload: any, bytes: Buffer) =>
  fetch(upload.upload_url, { method: 'PUT', headers: { 'content-type': upload.headers['content-type'] }, body: bytes });

describe('presigned media uploads', () => {
  it('turns an uploaded document of more than 6 MB into a media id', async () => {
    // Prepare: a PDF padded past the request-body limit of API Gateway/Lambda.
    const bytes = Buffer.concat([tinyPdf(), Buffer.alloc(7 * 1024 * 1024, 0x20)]);
    const created = await create({ type: 'document', file_size: bytes.length, mime_type: 'application/pdf', filename: 'report.pdf' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ upload_id: expect.any(String), method: 'PUT', max_bytes: 100 * 1024 * 1024 });
    // No checksum is signed into the URL: the SDK's default would sign the CRC32 of an empty body, which S3 in AWS
    // checks against the bytes PUT and refuses (the local S3 does not check it).
    expect([...new URL(created.body.upload_url).searchParams.keys()].filter((name) => /checksum/i.test(name))).toEqual([]);
    // Act
    expect((await put(created.body, bytes)).status).toBe(200);
    const done = await complete(created.body.upload_id);
    // Assess
    expect(done.status).toBe(200);
    expect(done.body).toEqual({ media_id: expect.any(String), mime_type: 'application/pdf', file_size: bytes.length, type: 'document' });
    const stored = harness.sandbox.state.media.get(done.body.media_id);
    expect(stored.bytes.length).toBe(bytes.length);
    expect(stored.filename).toBe('report.pdf');
  });

  it('keeps the file it checked: a PUT to the upload URL after completion changes neither the media nor what its URL serves', async () => {
    // Prepare: two PNGs of one length (the length is signed into the URL), the second put after completion
    const [first, second] = await Promise.all([smallPng(), noisePng(64, 48)]);
    const size = Math.max(first.length, second.length);
    const pad = (png: Buffer) => Buffer.concat([png, Buffer.alloc(size - png.length)]);
    const created = await create({ type: 'image', file_size: size, mime_type: 'image/png' });
    expect((await put(created.body, pad(first))).status).toBe(200);
    const done = await complete(created.body.upload_id);
    expect(done.status).toBe(200);

    // Act
    await put(created.body, pad(second));
    const view = await api.invoke('GET /{version}/{id}', { apiKey: tenant.apiKey, params: { version: 'v23.0', id: done.body.media_id } });
    const served = Buffer.from(await (await fetch(view.body.url)).arrayBuffer());

    // Assess
    expect(served.equals(pad(first))).toBe(true);
    expect(view.body.sha256).toBe(createHash('sha256').update(pad(first)).digest('hex'));
  });

  it('answers the same media when completed twice', async () => {
    // Prepare
    const bytes = await smallPng();
    const created = await create({ type: 'image', file_size: bytes.length });
    await put(created.body, bytes);
    // Act
    const first = await complete(created.body.upload_id);
    const second = await complete(created.body.upload_id);
    // Assess
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
  });

  it('completes once when completed 20 times at once: every request answers the one media', async () => {
    // Prepare
    const bytes = await smallPng();
    const created = await create({ type: 'image', file_size: bytes.length });
    await put(created.body, bytes);
    const mediaBefore = harness.sandbox.state.media.size;
    // Act
    const all = await Promise.all(Array.from({ length: 20 }, () => complete(created.body.upload_id)));
    // Assess
    expect(all.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(new Set(all.map((r) => r.body.media_id)).size).toBe(1);
    expect(harness.sandbox.state.media.size - mediaBefore).toBe(1);
  });

  it('lets a completion that failed be tried again at once, once the file is there', async () => {
    // Prepare
    const bytes = await smallPng();
    const created = await create({ type: 'image', file_size: bytes.length });
    const early = await complete(created.body.upload_id);
    await put(created.body, bytes);
    // Act
    const done = await complete(created.body.upload_id);
    // Assess
    expect(early.body.error).toBe('upload_incomplete');
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ mime_type: 'image/png', file_size: bytes.length, type: 'image' });
  });

  it('refuses to start an upload over the type maximum', async () => {
    // Act
    const res = await create({ type: 'video', file_size: 16 * 1024 * 1024 + 1 });
    // Assess
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ error: 'media_too_large', message: expect.stringContaining('16 MB') });
  });

  it('checks the stored object again on completion: size and real format', async () => {
    // Prepare: an upload declared small, then a bigger object (the local S3 does not enforce the signed length).
    const big = await noisePng(1440, 1440);
    const tooBig = await create({ type: 'image', file_size: 1000 });
    await put(tooBig.body, big);
    const wrongFormat = await create({ type: 'image', file_size: tinyPdf().length });
    await put(wrongFormat.body, tinyPdf());
    // Act
    const a = await complete(tooBig.body.upload_id);
    const b = await complete(wrongFormat.body.upload_id);
    // Assess
    expect(a.status).toBe(413);
    expect(b.status).toBe(400);
    expect(b.body.error).toBe('unsupported_media_type');
  });

  it('says so when nothing was uploaded yet, and 404 for an unknown or foreign upload', async () => {
    // Prepare
    const created = await create({ type: 'image', file_size: 10 });
    const other = await api.newTenant();
    // Act
    const early = await complete(created.body.upload_id);
    const unknown = await complete(randomUUID());
    const foreign = await api.invoke('POST /media/v1/uploads/{id}/complete', { apiKey: other.apiKey, params: { id: created.body.upload_id } });
    const notUuid = await complete('abc');
    // Assess
    expect(early.status).toBe(400);
    expect(early.body.error).toBe('upload_incomplete');
    expect(unknown.status).toBe(404);
    expect(foreign.status).toBe(404);
    expect(notUuid.status).toBe(404);
  });

  it('validates the request', async () => {
    // Act
    const res = await create({ type: 'gif', file_size: -1 });
    // Assess
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation_error');
    expect(Object.keys(res.body.details).sort()).toEqual(['file_size', 'type']);
  });
});
