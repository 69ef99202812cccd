/** POST /media/v1 through API Gateway events, against DynamoDB Local, a local S3 and the upstream sandbox. */
import { startMediaHarness, invokeMultipart, invokeRaw, type MediaHarness } from './harness.ts';
import { noisePng, noiseWebp, smallJpeg, smallPng, smallWebp, tinyPdf, toneMp3, toneOpus, toneVorbis, smallMp4, aacInMp4, legacyOfficeFile } from './files.ts';

let harness: MediaHarness;
let api: typeof import('../../support/api.ts');
let tenant: Awaited<ReturnType<typeof api.newTenant>>;

beforeAll(async () => {
  harness = await startMediaHarness();
  api = await import('../../support/api.ts');
  tenant = await api.newTenant();
});

afterAll(async () => harness.stop());

describe('POST /media/v1', () => {
  it.each([
    ['image', 'photo.png', smallPng, 'image/png'],
    ['image', 'photo.jpg', smallJpeg, 'image/jpeg'],
    ['sticker', 'sticker.webp', smallWebp, 'image/webp'],
    ['document', 'invoice.pdf', async () => tinyPdf(), 'application/pdf'],
    ['document', 'notes.txt', async () => Buffer.from('plain text notes\nline two\n'), 'text/plain'],
    ['audio', 'song.mp3', () => toneMp3(1), 'audio/mpeg'],
    ['audio', 'voice.ogg', () => toneOpus(1), 'audio/ogg'],
    ['video', 'clip.mp4', smallMp4, 'video/mp4'],
    ['audio', 'recording.mp4', aacInMp4, 'audio/mp4'],
    ['document', 'report', async () => legacyOfficeFile('WordDocument'), 'application/msword'],
    ['document', 'sheet', async () => legacyOfficeFile('Workbook'), 'application/vnd.ms-excel'],
    ['document', 'slides', async () => legacyOfficeFile('PowerPoint Document'), 'application/vnd.ms-powerpoint'],
  ] as const)('accepts a %s (%s) and answers the Uploaded media result', async (type, filename, make, mime) => {
    // Prepare
    const bytes = await make();
    // Act
    const res = await invokeMultipart(tenant.apiKey, { type }, { bytes, filename, mimeType: 'application/octet-stream' });
    // Assess
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ media_id: expect.any(String), mime_type: mime, file_size: bytes.length, type });
    const stored = harness.sandbox.state.media.get(res.body.media_id);
    expect(stored.phoneNumberId).toBe(tenant.phoneNumberId);
    expect(Buffer.compare(stored.bytes, bytes)).toBe(0);
  });

  it('records the media id with an expiry about 30 days ahead', async () => {
    // Prepare
    const { getMedia } = await import('#shared/media/repository.ts');
    // Act
    const res = await invokeMultipart(tenant.apiKey, { type: 'image' }, { bytes: await smallPng(), filename: 'a.png' });
    // Assess
    const record = await getMedia(tenant.businessId, res.body.media_id);
    const days = (Date.parse(record!.expiresAt) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29.9);
    expect(days).toBeLessThan(30.1);
  });

  it('detects the type from the bytes, not the file name or declared MIME type', async () => {
    // Prepare: a PDF dressed up as a JPEG.
    const bytes = tinyPdf();
    // Act
    const res = await invokeMultipart(tenant.apiKey, { type: 'image' }, { bytes, filename: 'photo.jpg', mimeType: 'image/jpeg' });
    // Assess
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('unsupported_media_type');
    expect(res.body.message).toContain('image/jpeg, image/png, image/webp');
    expect(res.body.detected_mime_type).toBe('application/pdf');
  });

  it('takes UTF-16 and Windows-1252 text files as documents, and refuses them as audio', async () => {
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('Hello world\r\n', 'utf16le')]);
    const latin1 = Buffer.from('Nombre;Ciudad\r\nPeña;León\r\n', 'latin1');
    for (const [bytes, filename] of [[utf16, 'notes.txt'], [latin1, 'clientes.csv']] as const) {
      const document = await invokeMultipart(tenant.apiKey, { type: 'document' }, { bytes, filename });
      expect(document.status).toBe(200);
      expect(document.body).toMatchObject({ mime_type: 'text/plain', type: 'document' });
      const audio = await invokeMultipart(tenant.apiKey, { type: 'audio' }, { bytes, filename });
      expect(audio.status).toBe(400);
      expect(audio.body).toMatchObject({ error: 'unsupported_media_type', detected_mime_type: 'text/plain' });
    }
  });

  it('refuses OGG that is not Opus', async () => {
    const res = await invokeMultipart(tenant.apiKey, { type: 'audio' }, { bytes: await toneVorbis(1), filename: 'a.ogg' });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/Opus/);
  });

  it('refuses a PNG as a sticker, listing WebP', async () => {
    const res = await invokeMultipart(tenant.apiKey, { type: 'sticker' }, { bytes: await smallPng(), filename: 's.png' });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('image/webp');
  });

  it('answers 413 stating the maximum for an image over 5 MB', async () => {
    // Prepare: an uncompressed noise PNG of about 6.2 MB.
    const bytes = await noisePng(1440, 1440);
    expect(bytes.length).toBeGreaterThan(5 * 1024 * 1024);
    // Act
    const res = await invokeMultipart(tenant.apiKey, { type: 'image' }, { bytes, filename: 'big.png' });
    // Assess
    expect(res.status).toBe(413);
    expect(res.body.error).toBe('media_too_large');
    expect(res.body.message).toContain('5 MB');
  });

  it('answers 413 for a sticker over 500 KB', async () => {
    const bytes = Buffer.concat([await smallWebp(), Buffer.alloc(520 * 1024)]);
    const res = await invokeMultipart(tenant.apiKey, { type: 'sticker' }, { bytes, filename: 's.webp' });
    expect(res.status).toBe(413);
    expect(res.body.message).toContain('500 KB');
  });

  it('states in bytes a size just over the limit, which rounded would read as the limit itself', async () => {
    const webp = await smallWebp();
    const bytes = Buffer.concat([webp, Buffer.alloc(500 * 1024 + 1 - webp.length)]);
    const res = await invokeMultipart(tenant.apiKey, { type: 'sticker' }, { bytes, filename: 's.webp' });
    expect(res.status).toBe(413);
    expect(res.body.message).toBe(`The maximum size for sticker files is 500 KB; this file is ${bytes.length.toLocaleString('en-US')} bytes`);
  });

  it('refuses JSON with a 400, never a 500', async () => {
    // Act
    const res = await api.invoke('POST /media/v1', { apiKey: tenant.apiKey, body: { type: 'image', file: 'abc' } });
    // Assess
    expect(res.status).toBe(400);
    expect(['validation_error', 'invalid_json']).toContain(res.body.error);
  });

  it.each([
    ['a missing type', {}, true, 'type'],
    ['an unknown type', { type: 'gif' }, true, 'type'],
    ['a missing file', { type: 'image' }, false, 'file'],
  ])('answers 400 validation_error for %s', async (_name, fields, withFile, field) => {
    // Act
    const res = await invokeMultipart(tenant.apiKey, fields as Record<string, string>, withFile ? { bytes: await smallPng() } : undefined);
    // Assess
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation_error');
    expect(Object.keys(res.body.details)).toContain(field);
  });

  it.each([
    ['two parts named file', ['file', 'file'], { file: ['is given more than once'] }],
    ['a second file part of another name', ['file', 'file2'], { file2: ['must be a text field, not a file'] }],
  ])('answers 400 for a form with %s, at once (a large second part stalled the parser for good)', async (_name, names, details) => {
    // Prepare: two files of 300 KB each, more than the parser buffers at a time
    const form = new FormData();
    form.set('type', 'image');
    const jpeg = await smallJpeg();
    for (const name of names) form.append(name, new Blob([Buffer.concat([jpeg, Buffer.alloc(300_000)])], { type: 'image/jpeg' }), 'photo.jpg');
    const request = new Request('http://local/media/v1', { method: 'POST', body: form });
    // Act
    const res = await invokeRaw('POST /media/v1', tenant.apiKey, Buffer.from(await request.arrayBuffer()), request.headers.get('content-type')!);
    // Assess
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'validation_error', details });
  }, 15_000);

  it.each([
    ['a field given twice (the parser kept the last)', (f: FormData) => { f.append('type', 'image'); f.append('type', 'audio'); }, { type: ['is given more than once'] }],
    ['more fields than the parser keeps (it dropped the rest, type among them)', (f: FormData) => {
      for (let i = 0; i < 20; i++) f.append(`extra${i}`, 'x');
      f.append('type', 'image');
    }, { _body: ['at most 20 form fields besides the file'] }],
  ])('answers 400 naming what is wrong for %s', async (_name, fill, details) => {
    // Prepare
    const form = new FormData();
    fill(form);
    form.append('file', new Blob([(await smallPng()) as Uint8Array<ArrayBuffer>], { type: 'image/png' }), 'a.png');
    const request = new Request('http://local/media/v1', { method: 'POST', body: form });
    // Act
    const res = await invokeRaw('POST /media/v1', tenant.apiKey, Buffer.from(await request.arrayBuffer()), request.headers.get('content-type')!);
    // Assess
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'validation_error', details });
  });

  it('takes a form with 19 fields besides type and file', async () => {
    const form = new FormData();
    for (let i = 0; i < 19; i++) form.append(`extra${i}`, 'x');
    form.append('type', 'image');
    form.append('file', new Blob([(await smallPng()) as Uint8Array<ArrayBuffer>], { type: 'image/png' }), 'a.png');
    const request = new Request('http://local/media/v1', { method: 'POST', body: form });
    const res = await invokeRaw('POST /media/v1', tenant.apiKey, Buffer.from(await request.arrayBuffer()), request.headers.get('content-type')!);
    expect(res.status).toBe(200);
  });

  it('takes a file part without a filename (RFC 7578 makes it optional)', async () => {
    // Prepare: the form as a client that omits the filename writes it.
    const jpeg = await smallJpeg();
    const boundary = 'x-boundary-7578';
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="type"\r\n\r\nimage\r\n`),
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"\r\nContent-Type: image/jpeg\r\n\r\n`),
      jpeg,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    // Act
    const res = await invokeRaw('POST /media/v1', tenant.apiKey, body, `multipart/form-data; boundary=${boundary}`);
    // Assess
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ media_id: expect.any(String), mime_type: 'image/jpeg', file_size: jpeg.length, type: 'image' });
    expect(Buffer.compare(harness.sandbox.state.media.get(res.body.media_id).bytes, jpeg)).toBe(0);
  });

  it('answers 400 for a form cut off inside its file part (the parser\'s stream error killed the process) or one that never ends', async () => {
    // Prepare: a file part with no closing delimiter after it.
    const body = Buffer.concat([
      Buffer.from('--zz\r\nContent-Disposition: form-data; name="type"\r\n\r\nimage\r\n'),
      Buffer.from('--zz\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n'),
      (await smallPng()).subarray(0, 20),
    ]);
    const fileThenDelimiterInside = Buffer.concat([body, Buffer.from('--zz--')]);
    const headerWithoutBlankLine = Buffer.from('--zz\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n--zz--\r\n');
    // Act
    const cut = await invokeRaw('POST /media/v1', tenant.apiKey, body, 'multipart/form-data; boundary=zz');
    const noBoundary = await invokeRaw('POST /media/v1', tenant.apiKey, body, 'multipart/form-data');
    const inside = await invokeRaw('POST /media/v1', tenant.apiKey, fileThenDelimiterInside, 'multipart/form-data; boundary=zz');
    const stalled = await invokeRaw('POST /media/v1', tenant.apiKey, headerWithoutBlankLine, 'multipart/form-data; boundary=zz');
    // Assess
    expect([cut.status, noBoundary.status, inside.status, stalled.status]).toEqual([400, 400, 400, 400]);
    expect(cut.body).toMatchObject({ error: 'validation_error', message: 'The multipart form could not be parsed' });
  });

  it.each([
    ['a quoted boundary', (b: string) => `multipart/form-data; boundary="${b}"`],
    ['no space before the boundary', (b: string) => `multipart/form-data;boundary=${b}`],
    ['a charset before the boundary', (b: string) => `multipart/form-data; charset=utf-8; boundary=${b}`],
  ])('takes a form whose Content-Type has %s (RFC 2046 boundary characters too)', async (_name, contentType) => {
    // Prepare
    const jpeg = await smallJpeg();
    const boundary = '----_Part_0_12345.67890';
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="type"\r\n\r\nimage\r\n`),
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`),
      jpeg,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    // Act
    const res = await invokeRaw('POST /media/v1', tenant.apiKey, body, contentType(boundary));
    // Assess
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ mime_type: 'image/jpeg', file_size: jpeg.length, type: 'image' });
  });

  it('answers a clear 400 for a business without a messaging account', async () => {
    // Prepare: a business item without a phone number id.
    const { db, table } = await import('#shared/store/client.ts');
    const { UpdateCommand } = await import('@aws-sdk/lib-dynamodb');
    const { keys } = await import('#shared/store/keys.ts');
    const other = await api.newTenant();
    await db.send(new UpdateCommand({ TableName: table(), Key: keys.business(other.businessId), UpdateExpression: 'REMOVE phoneNumberId' }));
    // Act
    const res = await invokeMultipart(other.apiKey, { type: 'image' }, { bytes: await smallPng() });
    // Assess
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('messaging_not_configured');
  });

  it('needs the messages:write scope', async () => {
    const readOnly = await api.newTenant(['messages:read']);
    const res = await invokeMultipart(readOnly.apiKey, { type: 'image' }, { bytes: await smallPng() });
    expect(res.status).toBe(403);
  });
});

describe('POST /{version}/{id}/media (Cloud API upload)', () => {
  const cloudUpload = async (bytes: Buffer, mime: string) => {
    const form = new FormData();
    form.set('messaging_product', 'whatsapp');
    form.set('type', mime);
    form.set('file', new Blob([bytes as Uint8Array<ArrayBuffer>], { type: mime }), 'file');
    const request = new Request('http://local/media', { method: 'POST', body: form });
    return invokeRaw('POST /{version}/{id}/media', tenant.apiKey, Buffer.from(await request.arrayBuffer()), request.headers.get('content-type')!, { version: 'v23.0', id: tenant.phoneNumberId });
  };

  it("takes a WebP photo over a sticker's 500 KB (Meta's upload does not say what it is for), and refuses it as a sticker by id", async () => {
    // Prepare
    const photo = await noiseWebp(500, 500);
    expect(photo.length).toBeGreaterThan(500 * 1024);
    // Act
    const uploaded = await cloudUpload(photo, 'image/webp');
    const { planMediaSend } = await import('#shared/media/send-media.ts');
    const asImage = await planMediaSend(tenant.businessId, tenant.phoneNumberId, { type: 'image', media: { id: uploaded.body.id } });
    const asSticker = await planMediaSend(tenant.businessId, tenant.phoneNumberId, { type: 'sticker', media: { id: uploaded.body.id } }).catch((err: unknown) => err);
    // Assess
    expect(uploaded.status).toBe(200);
    expect(asImage).toMatchObject({ kind: 'ready' });
    expect(asSticker).toMatchObject({ status: 413, body: { error: 'media_too_large', message: expect.stringContaining('500 KB') } });
  });
});

describe('an upstream that fails a media call', () => {
  const fault = (f: Record<string, unknown>) => harness.sandbox.state.faults.push({ remaining: 1, target: 'media', ...f });
  afterEach(() => { harness.sandbox.state.faults = []; });

  it.each([
    ['does not answer', { kind: 'error500' }, 502, { error: 'upstream_unavailable', retry_after: expect.any(Number) }],
    ['throttles', { kind: 'throttle' }, 429, { error: 'upstream_throttled', code: '130429', retry_after: expect.any(Number) }],
    ['refuses the file as too large (131053)', { kind: 'error', code: 131053 }, 400, { error: 'file_too_large', code: '131053', action_required: expect.any(String) }],
    ['refuses it with a code the contract does not list', { kind: 'error', code: 100, message: 'Param file is invalid' }, 400, { error: 'upstream_error', code: '100', message: '(#100) Param file is invalid' }],
    ['refuses with HTTP 200 and an error object', { kind: 'error', status: 200, code: 100, message: 'Param file is invalid' }, 400, { error: 'upstream_error', code: '100' }],
  ])('answers an upload the upstream %s with its own status and error, not a 500 or validation_error', async (_case, f, status, body) => {
    // Prepare
    fault(f);
    // Act
    const res = await invokeMultipart(tenant.apiKey, { type: 'image' }, { bytes: await smallPng(), filename: 'a.png' });
    // Assess
    expect(res.status).toBe(status);
    expect(res.body).toMatchObject(body);
  });

  it('answers the Cloud API upload and delete in Graph errors when the upstream does not answer, not an unexpected error', async () => {
    // Prepare: an uploaded id to delete
    const uploaded = await invokeMultipart(tenant.apiKey, { type: 'image' }, { bytes: await smallPng(), filename: 'a.png' });
    const form = new FormData();
    form.set('messaging_product', 'whatsapp');
    form.set('file', new Blob([(await smallPng()) as Uint8Array<ArrayBuffer>], { type: 'image/png' }), 'a.png');
    const request = new Request('http://local/media', { method: 'POST', body: form });
    const raw = Buffer.from(await request.arrayBuffer());

    // Act
    fault({ kind: 'error500' });
    const upload = await invokeRaw('POST /{version}/{id}/media', tenant.apiKey, raw, request.headers.get('content-type')!, { version: 'v23.0', id: tenant.phoneNumberId });
    fault({ kind: 'throttle' });
    const del = await api.invoke('DELETE /{version}/{id}', { apiKey: tenant.apiKey, params: { version: 'v23.0', id: uploaded.body.media_id } });

    // Assess
    expect(upload.status).toBe(500);
    expect(upload.body.error).toMatchObject({ type: 'OAuthException', message: expect.stringContaining('upstream platform did not answer') });
    expect(del.status).toBe(400);
    expect(del.body.error).toMatchObject({ code: 130429, message: expect.stringContaining('throttling') });
    // The id was not deleted: the throttled delete changed nothing.
    expect(harness.sandbox.state.media.has(uploaded.body.media_id)).toBe(true);
  });

  it("answers a Cloud API delete the upstream refuses with Meta's refusal, and the id keeps working; one it no longer has is deleted", async () => {
    // Prepare: an uploaded id, and the upstream refusing its delete (a permission error)
    const uploaded = await invokeMultipart(tenant.apiKey, { type: 'image' }, { bytes: await smallPng(), filename: 'a.png' });
    const id = uploaded.body.media_id;
    fault({ kind: 'error', code: 10, status: 403, message: 'Application does not have permission for this action' });

    // Act
    const refused = await api.invoke('DELETE /{version}/{id}', { apiKey: tenant.apiKey, params: { version: 'v23.0', id } });
    const stillThere = await api.invoke('GET /{version}/{id}', { apiKey: tenant.apiKey, params: { version: 'v23.0', id } });
    harness.sandbox.state.media.delete(id);
    const goneUpstream = await api.invoke('DELETE /{version}/{id}', { apiKey: tenant.apiKey, params: { version: 'v23.0', id } });

    // Assess
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 10, message: '(#10) Application does not have permission for this action' });
    expect(stillThere.status).toBe(200);
    expect(goneUpstream).toMatchObject({ status: 200, body: { success: true } });
  });
});
