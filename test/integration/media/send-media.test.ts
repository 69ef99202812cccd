/**
 * The send path's media rules (Media messages, the autoConvert table, the proxy, voice notes), with
 * files generated here and served from a loopback server, against DynamoDB Local, a local S3 and the
 * upstream sandbox.
 */
import { startMediaHarness, serveFiles, type MediaHarness } from './harness.ts';
import { bigWav, longMp3, noiseJpeg, photoJpeg, smallMp4, smallPng, tinyPdf, toneMp3, toneOpus } from './files.ts';

const MB = 1024 * 1024;
let harness: MediaHarness;
let server: Awaited<ReturnType<typeof serveFiles>>;
let media: typeof import('#shared/media/send-media.ts') & typeof import('#shared/media/process-media.ts');
let tenant: { businessId: string; phoneNumberId: string; apiKey: string };

beforeAll(async () => {
  harness = await startMediaHarness();
  const api = await import('../../support/api.ts');
  media = { ...(await import('#shared/media/send-media.ts')), ...(await import('#shared/media/process-media.ts')) };
  tenant = await api.newTenant();
  const mp4 = await smallMp4();
  // Generated concurrently: the machine may be busy.
  const [photo, noise, wav, audiobook, tone, opus, png] = await Promise.all([
    photoJpeg(3000, 2200, 24), noiseJpeg(4800, 3600), bigWav(24), longMp3(36), toneMp3(2), toneOpus(2), smallPng(),
  ]);
  server = await serveFiles({
    '/photo.jpg': { bytes: photo, contentType: 'image/jpeg' },
    '/noise.jpg': { bytes: noise, contentType: 'image/jpeg' },
    // A JPEG's first bytes, then 6 MB that decode to nothing: an image by its header, not one sharp can read.
    '/corrupt.jpg': { bytes: Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(6 * MB, 0x42)]), contentType: 'image/jpeg' },
    '/small.png': { bytes: png, contentType: 'image/png' },
    '/sandbox-unreachable/small.png': { bytes: png, contentType: 'image/png' },
    '/sandbox-unreachable/big.pdf': { bytes: Buffer.concat([tinyPdf(), Buffer.alloc(6 * MB, 0x20)]), contentType: 'application/pdf' },
    '/clip.mp4': { bytes: mp4, contentType: 'video/mp4' },
    '/big-clip.mp4': { bytes: Buffer.concat([mp4, Buffer.alloc(17 * MB)]), contentType: 'video/mp4' },
    '/just-over.mp4': { bytes: Buffer.concat([mp4, Buffer.alloc(16 * MB + 1 - mp4.length)]), contentType: 'video/mp4' },
    '/huge.mp4': { size: 120 * MB, contentType: 'video/mp4' },
    '/song.wav': { bytes: wav, contentType: 'audio/wav' },
    '/audiobook.mp3': { bytes: audiobook, contentType: 'audio/mpeg' },
    '/tone.mp3': { bytes: tone, contentType: 'audio/mpeg' },
    '/voice.ogg': { bytes: opus, contentType: 'audio/ogg' },
    '/manual.pdf': { size: 40 * MB, contentType: 'application/pdf' },
    '/archive.pdf': { size: 101 * MB, contentType: 'application/pdf' },
  });
}, 180_000);

afterAll(async () => {
  await server?.close();
  await harness?.stop();
});

/** The plan, and when it asks for the worker, the worker's processing (as the media worker runs it). */
async function prepare(req: import('#shared/media/send-media.ts').MediaSendRequest) {
  const plan = await media.planMediaSend(tenant.businessId, tenant.phoneNumberId, req);
  if (plan.kind === 'ready') return { plan, prepared: plan.prepared };
  return { plan, prepared: await media.processMediaSend(tenant.businessId, tenant.phoneNumberId, req, plan.reason) };
}

const uploaded = (id: string) => harness.sandbox.state.media.get(id);

describe('media sends: the autoConvert table', () => {
  it('image over 5 MB by link: compressed at quality 85 and sent as an image, even without autoConvert', async () => {
    // Prepare
    const original = server.files['/photo.jpg'].bytes!;
    expect(original.length).toBeGreaterThan(5 * MB);
    // Act
    const { plan, prepared } = await prepare({ type: 'image', media: { link: server.url('/photo.jpg'), caption: 'hi' } });
    // Assess
    expect(plan).toEqual({ kind: 'job', reason: 'compress' });
    expect(prepared).toMatchObject({ type: 'image', action: 'compressed', media: { id: expect.any(String), caption: 'hi' } });
    expect(prepared.metadata).toBeUndefined();
    const sent = uploaded(prepared.media.id!);
    expect(sent.mimeType).toBe('image/jpeg');
    expect(sent.bytes.length).toBeLessThanOrEqual(5 * MB);
  });

  it('image still over 5 MB after 85/70/50 with autoConvert: sent as a document with metadata', async () => {
    // Act
    const { prepared } = await prepare({ type: 'image', media: { link: server.url('/noise.jpg') }, autoConvert: true });
    // Assess
    expect(prepared.type).toBe('document');
    expect(prepared.media).toMatchObject({ link: server.url('/noise.jpg'), filename: 'noise.jpg' });
    expect(prepared.metadata).toEqual({ originalType: 'image', wasConverted: true, reason: expect.stringContaining('quality 85, 70 and 50') });
  }, 90_000);

  it('image still over 5 MB after the ladder without autoConvert: 413 media_too_large', async () => {
    // Act
    const attempt = prepare({ type: 'image', media: { link: server.url('/noise.jpg') } });
    // Assess
    await expect(attempt).rejects.toMatchObject({
      status: 413,
      body: { error: 'media_too_large', message: expect.any(String), suggestion: expect.any(String), limits: { image: '5 MB', video: '16 MB', audio: '16 MB', document: '100 MB' } },
    });
  }, 90_000);

  it('image over 5 MB that does not decode: 413 without autoConvert, a document with it (it answered 502)', async () => {
    // Act
    const refused = prepare({ type: 'image', media: { link: server.url('/corrupt.jpg') } });
    await expect(refused).rejects.toMatchObject({ status: 413, body: { error: 'media_too_large', message: expect.stringContaining('could not be decoded') } });
    const { prepared } = await prepare({ type: 'image', media: { link: server.url('/corrupt.jpg') }, autoConvert: true });
    // Assess
    expect(prepared.type).toBe('document');
    expect(prepared.metadata).toEqual({ originalType: 'image', wasConverted: true, reason: expect.stringContaining('could not be decoded') });
  }, 90_000);

  it('video over 16 MB with autoConvert: no compression, sent as a document (decided without downloading)', async () => {
    // Act
    const { plan, prepared } = await prepare({ type: 'video', media: { link: server.url('/big-clip.mp4'), caption: 'c' }, autoConvert: true });
    // Assess
    expect(plan.kind).toBe('ready');
    expect(prepared).toEqual({
      type: 'document',
      media: { link: server.url('/big-clip.mp4'), filename: 'big-clip.mp4', caption: 'c' },
      metadata: { originalType: 'video', wasConverted: true, reason: expect.stringContaining('16 MB') },
      action: 'sent_as_document',
    });
    expect(server.hits).not.toContain('GET /big-clip.mp4');
  });

  it('states a size one byte over the limit in bytes, not as the limit rounded ("16.0 MB is over the 16 MB")', async () => {
    const { prepared } = await prepare({ type: 'video', media: { link: server.url('/just-over.mp4') }, autoConvert: true });
    expect(prepared.metadata?.reason).toBe('video of 16,777,217 bytes is over the 16 MB video limit; sent unchanged as a document');
  });

  it('video over 16 MB without autoConvert: 413 with message, suggestion and limits as strings', async () => {
    const attempt = prepare({ type: 'video', media: { link: server.url('/big-clip.mp4') } });
    await expect(attempt).rejects.toMatchObject({ status: 413, body: { error: 'media_too_large', suggestion: expect.stringContaining('autoConvert'), limits: { video: '16 MB' } } });
  });

  it('video over 100 MB even with autoConvert: 413 (nothing may exceed the document limit), not advising autoConvert', async () => {
    const refused = await prepare({ type: 'video', media: { link: server.url('/huge.mp4') }, autoConvert: true }).catch((err: any) => err);
    expect(refused).toMatchObject({ status: 413, body: { error: 'media_too_large', suggestion: expect.stringContaining('100 MB') } });
    expect(refused.body.suggestion).not.toMatch(/autoConvert/);
  });

  it('audio over 16 MB with autoConvert: compressed to MP3 64 kbps mono and sent as audio', async () => {
    // Act
    const { plan, prepared } = await prepare({ type: 'audio', media: { link: server.url('/song.wav') }, autoConvert: true });
    // Assess
    expect(plan).toEqual({ kind: 'job', reason: 'convert' });
    expect(prepared).toMatchObject({ type: 'audio', action: 'converted_to_mp3' });
    const sent = uploaded(prepared.media.id!);
    expect(sent.mimeType).toBe('audio/mpeg');
    expect(sent.bytes.length).toBeLessThan(16 * MB);
    // 64 kbps mono: about 8 KB per second of the 24 s input.
    expect(sent.bytes.length).toBeGreaterThan(24 * 7_000);
    expect(sent.bytes.length).toBeLessThan(24 * 9_000);
  }, 90_000);

  it('audio still over 16 MB as MP3 64 kbps with autoConvert: sent as a document', async () => {
    const { prepared } = await prepare({ type: 'audio', media: { link: server.url('/audiobook.mp3') }, autoConvert: true });
    expect(prepared.type).toBe('document');
    expect(prepared.metadata).toEqual({ originalType: 'audio', wasConverted: true, reason: expect.stringContaining('MP3 64 kbps mono') });
  }, 90_000);

  it('audio over 16 MB without autoConvert: 413', async () => {
    await expect(prepare({ type: 'audio', media: { link: server.url('/song.wav') } })).rejects.toMatchObject({ status: 413, body: { error: 'media_too_large' } });
  });

  it('document up to 100 MB: unchanged, by link', async () => {
    const { prepared } = await prepare({ type: 'document', media: { link: server.url('/manual.pdf'), filename: 'manual.pdf' }, autoConvert: true });
    expect(prepared).toEqual({ type: 'document', media: { link: server.url('/manual.pdf'), filename: 'manual.pdf' }, action: 'as_is' });
  });

  it('document over 100 MB: 413 with or without autoConvert', async () => {
    for (const autoConvert of [true, false]) {
      await expect(prepare({ type: 'document', media: { link: server.url('/archive.pdf'), filename: 'a.pdf' }, autoConvert })).rejects.toMatchObject({
        status: 413,
        body: { error: 'media_too_large', limits: { document: '100 MB' } },
      });
    }
  });

  it('files within the limits go out unchanged by link', async () => {
    for (const [type, path] of [['image', '/small.png'], ['video', '/clip.mp4'], ['audio', '/tone.mp3']] as const) {
      const { prepared } = await prepare({ type, media: { link: server.url(path) }, autoConvert: true });
      expect(prepared).toEqual({ type, media: { link: server.url(path) }, action: 'as_is' });
    }
  });
});

describe('media sends: proxy, voice notes, ids, unsafe links', () => {
  it('proxies a link the upstream cannot download (131052): downloads it, uploads it, sends by id', async () => {
    // Prepare
    const req = { type: 'image' as const, media: { link: server.url('/sandbox-unreachable/small.png'), caption: 'x' } };
    // Act
    const plan = media.planAfterUpstreamError(131052, req);
    const prepared = await media.processMediaSend(tenant.businessId, tenant.phoneNumberId, req, 'proxy');
    // Assess
    expect(plan).toEqual({ kind: 'job', reason: 'proxy' });
    expect(prepared).toMatchObject({ type: 'image', action: 'proxied', media: { id: expect.any(String), caption: 'x' } });
    expect(Buffer.compare(uploaded(prepared.media.id!).bytes, server.files['/sandbox-unreachable/small.png'].bytes!)).toBe(0);
  });

  it('refuses to proxy more than 5 MB', async () => {
    const req = { type: 'document' as const, media: { link: server.url('/sandbox-unreachable/big.pdf'), filename: 'b.pdf' } };
    await expect(media.processMediaSend(tenant.businessId, tenant.phoneNumberId, req, 'proxy')).rejects.toMatchObject({
      status: 400,
      body: { error: 'media_download_failed', message: expect.stringContaining('5.0 MB proxy limit') },
    });
  });

  it('says so when the link cannot be downloaded', async () => {
    const req = { type: 'image' as const, media: { link: server.url('/missing.png') } };
    await expect(media.processMediaSend(tenant.businessId, tenant.phoneNumberId, req, 'proxy')).rejects.toMatchObject({ body: { error: 'media_download_failed' } });
  });

  it('converts audio to OGG/Opus when a voice note is asked for, and leaves Opus alone', async () => {
    // Act
    const mp3 = await prepare({ type: 'audio', media: { link: server.url('/tone.mp3'), voice: true } });
    const opus = await prepare({ type: 'audio', media: { link: server.url('/voice.ogg'), voice: true } });
    // Assess
    expect(mp3.plan).toEqual({ kind: 'job', reason: 'voice' });
    expect(mp3.prepared.action).toBe('voice_note');
    expect(uploaded(mp3.prepared.media.id!).mimeType).toBe('audio/ogg');
    expect(opus.plan.kind).toBe('ready');
    expect(opus.prepared.media).toEqual({ link: server.url('/voice.ogg'), voice: true });
    expect(mp3.prepared.media).toEqual({ id: expect.any(String), voice: true });
  }, 90_000);

  it('sends a known media id as is, and refuses an expired one with a clear 400', async () => {
    // Prepare
    const { storeMedia } = await import('#shared/media/upload-service.ts');
    const { getMedia, putMedia } = await import('#shared/media/repository.ts');
    const stored = await storeMedia(tenant.businessId, tenant.phoneNumberId, { type: 'image', bytes: await smallPng(), mimeType: 'image/png' });
    const expired = await storeMedia(tenant.businessId, tenant.phoneNumberId, { type: 'image', bytes: await smallPng(), mimeType: 'image/png' });
    const record = (await getMedia(tenant.businessId, expired.media_id))!;
    await putMedia({ ...record, expiresAt: new Date(Date.now() - 1000).toISOString() });
    // Act
    const ok = await prepare({ type: 'image', media: { id: stored.media_id, caption: 'c' } });
    const attempt = prepare({ type: 'image', media: { id: expired.media_id } });
    // Assess
    expect(ok.prepared).toEqual({ type: 'image', media: { id: stored.media_id, caption: 'c' }, action: 'as_is' });
    await expect(attempt).rejects.toMatchObject({ status: 400, body: { error: 'media_expired', message: expect.stringContaining('expired') } });
  });

  it('refuses an uploaded media id of another kind (a video as an image, a PNG as a sticker) with 400 unsupported_media_type; a document takes it', async () => {
    // Prepare
    const { storeMedia } = await import('#shared/media/upload-service.ts');
    const video = await storeMedia(tenant.businessId, tenant.phoneNumberId, { type: 'video', bytes: await smallMp4(), mimeType: 'video/mp4' });
    const png = await storeMedia(tenant.businessId, tenant.phoneNumberId, { type: 'image', bytes: await smallPng(), mimeType: 'image/png' });
    // Act
    const refused = (type: 'image' | 'sticker', id: string) => prepare({ type, media: { id } }).then(() => 'prepared', (err: unknown) => err);
    const videoAsImage = await refused('image', video.media_id);
    const pngAsSticker = await refused('sticker', png.media_id);
    const asDocument = await prepare({ type: 'document', media: { id: png.media_id, filename: 'p.png' } });
    // Assess
    expect(videoAsImage).toMatchObject({ status: 400, body: { error: 'unsupported_media_type', message: expect.stringContaining('video/mp4') } });
    expect(pngAsSticker).toMatchObject({ status: 400, body: { error: 'unsupported_media_type', allowed_mime_types: ['image/webp'] } });
    expect(asDocument.prepared.action).toBe('as_is');
  });

  it.each([
    ['the metadata address', 'http://169.254.169.254/latest/meta-data/iam'],
    ['a non-http scheme', 'file:///etc/passwd'],
  ])('refuses a link to %s with 400 invalid_media_link', async (_name, link) => {
    await expect(prepare({ type: 'image', media: { link } })).rejects.toMatchObject({ status: 400, body: { error: 'invalid_media_link' } });
  });
});
