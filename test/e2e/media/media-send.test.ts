/**
 * Media sends over HTTP on the local stack: by media id, the proxy fallback when the upstream cannot
 * download a link (131052), compression of a large image link, a large video sent as a document with
 * autoConvert, and 413 media_too_large without it.
 */
import type { LocalStack } from '#infra/local/stack.ts';
import { photoJpeg, smallMp4, smallPng } from '../../integration/media/files.ts';
import { customerWrites, startFileServer } from '../../support/http.ts';

const MB = 1024 * 1024;
let stack: LocalStack;
let files: Awaited<ReturnType<typeof startFileServer>>;
let filesUrl: string;
const served: Record<string, Buffer> = {};
const to = '+5215550001111';

beforeAll(async () => {
  const { startTestStack } = await import('../../support/stack.ts');
  stack = await startTestStack({ demo: true, queueRetryDelayMs: 50 });
  served['/sandbox-unreachable/pic.png'] = await smallPng();
  served['/sandbox-unreachable/notes.txt'] = Buffer.from('not a picture\n');
  served['/clip.mp4'] = await smallMp4();
  served['/photo.jpg'] = await photoJpeg(3000, 2200, 24);
  served['/big-clip.mp4'] = Buffer.concat([await smallMp4(), Buffer.alloc(17 * MB)]);
  files = await startFileServer(served);
  filesUrl = files.url;
  // Free-form media messages need an open 24-hour window: the customer writes first.
  await customerWrites(stack, to);
}, 120_000);

afterAll(async () => {
  await files?.stop();
  await stack?.stop();
});

const auth = () => ({ authorization: `Bearer ${stack.demo!.apiKey}` });

async function send(body: Record<string, unknown>) {
  const res = await fetch(`${stack.url}/messages/v1`, { method: 'POST', headers: { ...auth(), 'content-type': 'application/json' }, body: JSON.stringify({ to, ...body }) });
  return { status: res.status, body: (await res.json()) as any };
}

async function lastSent(): Promise<any> {
  const res = await fetch(`${stack.sandboxUrl}/__sandbox/sent?to=${encodeURIComponent(to)}`);
  const list = (await res.json()) as any;
  const items = Array.isArray(list) ? list : list.sent ?? list.messages ?? [];
  const last = items[items.length - 1];
  return last?.payload ?? last;
}

describe('media sends over HTTP', () => {
  it('sends an uploaded media id, reusable for many sends', async () => {
    // Prepare
    const form = new FormData();
    form.set('type', 'image');
    form.set('file', new Blob([(await smallPng()) as Uint8Array<ArrayBuffer>]), 'a.png');
    const uploaded = (await (await fetch(`${stack.url}/media/v1`, { method: 'POST', headers: auth(), body: form })).json()) as any;
    // Act
    const first = await send({ type: 'image', image: { id: uploaded.media_id, caption: 'one' } });
    const second = await send({ type: 'image', image: { id: uploaded.media_id } });
    // Assess
    expect(first.status).toBe(200);
    expect(first.body.data).toMatchObject({ messageType: 'image', status: 'sent', direction: 'outbound' });
    expect(second.status).toBe(200);
    expect((await lastSent()).image).toEqual({ id: uploaded.media_id });
  });

  it('proxies a link the upstream cannot download (131052) and sends it by id', async () => {
    // Act
    const res = await send({ type: 'image', image: { link: `${filesUrl}/sandbox-unreachable/pic.png`, caption: 'proxied' } });
    // Assess
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ messageType: 'image', status: 'sent' });
    const payload = await lastSent();
    expect(payload.image).toEqual({ id: expect.any(String), caption: 'proxied' });
  });

  it('proxies the link on a retry too: a send refused by the closed window is retried once the customer writes', async () => {
    // Prepare: a recipient who has not written (131047), with a link only the service can fetch
    const other = '+5215550002222';
    const first = await fetch(`${stack.url}/messages/v1`, { method: 'POST', headers: { ...auth(), 'content-type': 'application/json' },
      body: JSON.stringify({ to: other, type: 'image', image: { link: `${filesUrl}/sandbox-unreachable/pic.png`, caption: 'later' } }) });
    const failed = (await first.json()) as any;
    expect(failed).toMatchObject({ code: '131047', data: { status: 'failed' } });
    await customerWrites(stack, other);

    // Act
    const retry = await fetch(`${stack.url}/messages/v1/${failed.data.id}/retry`, { method: 'POST', headers: auth() });

    // Assess: sent by id, with its caption
    expect(await retry.json()).toMatchObject({ data: { id: failed.data.id, status: 'sent' } });
    const sent = (await (await fetch(`${stack.sandboxUrl}/__sandbox/sent?to=${encodeURIComponent(other)}`)).json()) as any;
    const items = Array.isArray(sent) ? sent : sent.sent ?? sent.messages ?? [];
    expect(items.at(-1).image).toEqual({ id: expect.any(String), caption: 'later' });
  });

  it('proxies a template header link the upstream cannot download (131052), in the shortcut and the full form', async () => {
    // Prepare
    const link = `${filesUrl}/sandbox-unreachable/pic.png`;
    const full = { name: 'promo_header', language: { code: 'es_MX' }, components: [
      { type: 'header', parameters: [{ type: 'image', image: { link } }] },
      { type: 'body', parameters: [{ type: 'text', text: 'Ana' }] },
    ] };

    // Act
    const shortcut = await send({ type: 'template', templateName: 'promo_header', template_parameters: ['Ana'], header_media: { type: 'image', url: link } });
    const shortcutHeader = (await lastSent()).template.components.find((c: any) => c.type === 'header').parameters[0];
    const upstreamStyle = await send({ messaging_product: 'whatsapp', type: 'template', template: full });
    const fullHeader = (await lastSent()).template.components.find((c: any) => c.type === 'header').parameters[0];

    // Assess
    expect([shortcut.status, upstreamStyle.status]).toEqual([200, 200]);
    expect(shortcut.body.data).toMatchObject({ messageType: 'template', status: 'sent' });
    expect(shortcutHeader).toEqual({ type: 'image', image: { id: expect.stringMatching(/^\d+$/) } });
    expect(fullHeader).toEqual({ type: 'image', image: { id: expect.stringMatching(/^\d+$/) } });
  });

  it('proxies a GIF header link the upstream cannot download (131052) as a video file, and sends it by id as a GIF header', async () => {
    // Prepare: the upstream fails the first send of the link
    const link = `${filesUrl}/clip.mp4`;
    await fetch(`${stack.sandboxUrl}/__sandbox/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'error', code: 131052, count: 1, target: 'messages' }) });

    // Act
    const res = await send({ messaging_product: 'whatsapp', type: 'template', template: { name: 'hello_world', language: { code: 'en_US' }, components: [{ type: 'HEADER', parameters: [{ type: 'gif', gif: { link } }] }] } });

    // Assess
    expect(res.status).toBe(200);
    expect((await lastSent()).template.components[0].parameters[0]).toEqual({ type: 'gif', gif: { id: expect.stringMatching(/^\d+$/) } });
  });

  it('proxies a template header link on a retry too, keeping the service id as the callback data', async () => {
    // Prepare: the upstream refuses the first send once (131000), so the template is stored failed with its header link
    const link = `${filesUrl}/sandbox-unreachable/pic.png`;
    await fetch(`${stack.sandboxUrl}/__sandbox/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'error', code: 131000, target: 'messages' }) });
    const failed = await send({ type: 'template', templateName: 'promo_header', template_parameters: ['Ana'], header_media: { type: 'image', url: link } });
    expect(failed.body).toMatchObject({ code: '131000', data: { status: 'failed' } });

    // Act
    const retry = await fetch(`${stack.url}/messages/v1/${failed.body.data.id}/retry`, { method: 'POST', headers: auth() });

    // Assess: sent with the header by id (the link the upstream cannot fetch was proxied, as on a first send)
    expect(await retry.json()).toMatchObject({ data: { id: failed.body.data.id, status: 'sent' } });
    const sent = await lastSent();
    expect(sent.template.components.find((c: any) => c.type === 'header').parameters[0]).toEqual({ type: 'image', image: { id: expect.stringMatching(/^\d+$/) } });
    expect(sent.biz_opaque_callback_data).toBe(failed.body.data.id);
  });

  it('answers 131052 media_download_failed for a template header link neither the upstream nor the service can fetch', async () => {
    // Act: the file server answers 404 for this one
    const res = await send({ type: 'template', templateName: 'promo_header', template_parameters: ['Ana'], header_media: { type: 'image', url: `${filesUrl}/sandbox-unreachable/missing.png` } });

    // Assess
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'media_download_failed', code: '131052', data: { status: 'failed' } });
  });

  it('answers 131051 unsupported_media_type when the file the service fetched for the upstream is in a format its type does not take', async () => {
    // Act
    const res = await send({ type: 'image', image: { link: `${filesUrl}/sandbox-unreachable/notes.txt` } });
    const stored = await fetch(`${stack.url}/messages/v1/${res.body.data?.id}`, { headers: auth() });

    // Assess
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'unsupported_media_type', code: '131051', action_required: 'convert_media', data: { status: 'failed' } });
    expect(((await stored.json()) as any).message).toMatchObject({ status: 'failed' });
  });

  it('compresses an image link over 5 MB and sends it as an image', async () => {
    // Act
    const res = await send({ type: 'image', image: { link: `${filesUrl}/photo.jpg` } });
    // Assess
    expect(res.status).toBe(200);
    expect(res.body.data.messageType).toBe('image');
    expect(res.body.data.metadata).toBeUndefined();
    expect((await lastSent()).image.id).toEqual(expect.any(String));
  }, 60_000);

  it('sends a video over 16 MB as a document with autoConvert, with metadata', async () => {
    // Act
    const res = await send({ type: 'video', video: { link: `${filesUrl}/big-clip.mp4` }, autoConvert: true });
    // Assess
    expect(res.status).toBe(200);
    expect(res.body.data.messageType).toBe('document');
    expect(res.body.data.metadata).toEqual({ originalType: 'video', wasConverted: true, reason: expect.any(String) });
    expect((await lastSent()).document).toMatchObject({ link: `${filesUrl}/big-clip.mp4`, filename: 'big-clip.mp4' });
  });

  it('keeps autoConvert for a retry: a video link refused by the closed window, now over 16 MB, goes as a document', async () => {
    // Prepare: a recipient who has not written (131047); the file at the link is a small clip at the first send
    const other = '+5215550003333';
    served['/grows.mp4'] = await smallMp4();
    const first = await fetch(`${stack.url}/messages/v1`, { method: 'POST', headers: { ...auth(), 'content-type': 'application/json' },
      body: JSON.stringify({ to: other, type: 'video', video: { link: `${filesUrl}/grows.mp4`, caption: 'clip' }, autoConvert: true }) });
    const failed = (await first.json()) as any;
    expect(failed).toMatchObject({ code: '131047', data: { status: 'failed', messageType: 'video' } });
    served['/grows.mp4'] = served['/big-clip.mp4'];
    await customerWrites(stack, other);

    // Act
    const retry = await fetch(`${stack.url}/messages/v1/${failed.data.id}/retry`, { method: 'POST', headers: auth() });
    const retried = (await retry.json()) as any;
    const stored = (await (await fetch(`${stack.url}/messages/v1/${failed.data.id}`, { headers: auth() })).json()) as any;

    // Assess: sent as a document, as the first send would have sent the file, and stored as what was sent
    expect(retried).toMatchObject({ data: { id: failed.data.id, status: 'sent' } });
    const sent = (await (await fetch(`${stack.sandboxUrl}/__sandbox/sent?to=${encodeURIComponent(other)}`)).json()) as any[];
    expect(sent.at(-1).type).toBe('document');
    expect(sent.at(-1).document).toMatchObject({ link: `${filesUrl}/grows.mp4`, caption: 'clip' });
    expect(stored.message).toMatchObject({ messageType: 'document', status: 'sent', metadata: { originalType: 'video', wasConverted: true } });
    expect(stored.message).not.toHaveProperty('autoConvert');
  });

  it('answers 413 media_too_large without autoConvert', async () => {
    // Act
    const res = await send({ type: 'video', video: { link: `${filesUrl}/big-clip.mp4` } });
    // Assess
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ error: 'media_too_large', message: expect.any(String), suggestion: expect.any(String), limits: { image: '5 MB', video: '16 MB', audio: '16 MB', document: '100 MB' } });
  });
});
