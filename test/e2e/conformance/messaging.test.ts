/**
 * Contract conformance of the messaging sections (service-interface.md: Send a message, Media messages,
 * Template messages, Location, Reaction, Retry, Upload media, Send result, Uploaded media result, Message
 * status, Upstream delivery codes, Other errors, Limits) as a black-box client meets them over HTTP on the
 * local stack with the sandbox's rules (decisions.md).
 */
import { startMessagingStack, randomPhone, type MessagingStack, type Tenant } from '../messages/stack.ts';
import { smallMp4, smallPng } from '../../integration/media/files.ts';
import { startFileServer } from '../../support/http.ts';

const MB = 1024 * 1024;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const LIMITS = { image: '5 MB', video: '16 MB', audio: '16 MB', document: '100 MB' };

let m: MessagingStack;
let files: Awaited<ReturnType<typeof startFileServer>>;
let filesUrl: string;
const served: Record<string, Buffer> = {};

beforeAll(async () => {
  m = await startMessagingStack();
  served['/big-clip.mp4'] = Buffer.concat([await smallMp4(), Buffer.alloc(17 * MB)]);
  served['/garbage.jpg'] = Buffer.alloc(6 * MB, 7);
  served['/garbage.mp3'] = Buffer.alloc(17 * MB, 7);
  served['/big.webp'] = Buffer.alloc(600 * 1024, 3);
  // A file server that answers GET only (HEAD gets 405), like many simple test servers.
  files = await startFileServer(served, { getOnlyPrefix: '/get-only' });
  filesUrl = files.url;
}, 120_000);

afterAll(async () => {
  await files?.stop();
  await m?.stop();
});

/** A fresh tenant and a recipient with an open 24-hour window. */
async function chat(): Promise<{ t: Tenant; to: string; send: (body: Record<string, unknown>) => ReturnType<Tenant['call']> }> {
  const t = await m.tenant();
  const to = randomPhone();
  await t.inbound(to);
  return { t, to, send: (body) => t.call('POST', '/messages/v1', { to, ...body }) };
}

describe('Send a message: Send result and common fields', () => {
  it('answers the Send result for the service style and the upstream style', async () => {
    // Prepare
    const { to, send } = await chat();
    // Act
    const service = await send({ content: 'hola' });
    const upstream = await send({ messaging_product: 'whatsapp', type: 'text', text: { body: 'hola' } });
    // Assess
    for (const res of [service, upstream]) {
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        messaging_product: 'whatsapp',
        contacts: [{ input: to, wa_id: to.slice(1) }],
        messages: [{ id: expect.stringMatching(UUID), wamid: expect.any(String) }],
        data: { id: res.body.messages[0].id, conversationId: expect.stringMatching(UUID), messageType: 'text', direction: 'outbound', status: 'sent', createdAt: expect.any(String) },
      });
      expect(new Date(res.body.data.createdAt).toISOString()).toBe(res.body.data.createdAt);
    }
  });

  it('contacts[].input is the recipient as sent; wa_id is digits only', async () => {
    // Prepare
    const { to, send } = await chat();
    const spaced = `${to.slice(0, 3)} ${to.slice(3, 6)} ${to.slice(6)}`;
    // Act
    const res = await send({ to: spaced, content: 'hola' });
    // Assess
    expect(res.status).toBe(200);
    expect(res.body.contacts).toEqual([{ input: spaced, wa_id: to.slice(1) }]);
  });

  it('names a missing required field in details', async () => {
    // Prepare
    const t = await m.tenant();
    // Act
    const noTo = await t.call('POST', '/messages/v1', { content: 'x' });
    const noImage = await t.call('POST', '/messages/v1', { to: randomPhone(), type: 'image' });
    // Assess
    expect(noTo.status).toBe(400);
    expect(noTo.body).toMatchObject({ error: 'validation_error', details: { to: ['to is required'] } });
    expect(noImage.body).toMatchObject({ error: 'validation_error', details: { image: ['image is required'] } });
  });

  it('ai: pause for pauseDuration minutes (default 5), disable turns the AI off in the conversation', async () => {
    // Prepare
    const { t, send } = await chat();
    const pausedFor = async (res: { body: any }) => {
      const c = (await t.call('GET', `/conversations/v1/${res.body.data.conversationId}`)).body.conversation;
      return { minutes: Math.round((Date.parse(c.aiPausedUntil) - Date.parse(res.body.data.createdAt)) / 60_000), enabled: c.aiEnabled };
    };
    // Act
    const byDefault = await pausedFor(await send({ content: 'x', ai: { pause: true } }));
    const ten = await pausedFor(await send({ content: 'x', ai: { pause: true, pauseDuration: 10 } }));
    const disabled = await pausedFor(await send({ content: 'x', ai: { disable: true } }));
    // Assess
    expect(byDefault.minutes).toBe(5);
    expect(ten.minutes).toBe(10);
    expect(disabled.enabled).toBe(false);
  });

  it('ai.pauseDuration: 1440 accepted, 1441 refused', async () => {
    // Prepare
    const { send } = await chat();
    // Act
    const max = await send({ content: 'x', ai: { pause: true, pauseDuration: 1440 } });
    const over = await send({ content: 'x', ai: { pause: true, pauseDuration: 1441 } });
    // Assess
    expect(max.status).toBe(200);
    expect(over.status).toBe(400);
    expect(over.body.details).toHaveProperty(['ai.pauseDuration']);
  });
});

describe('Location and reaction', () => {
  it('accepts each boundary and refuses one past it', async () => {
    // Prepare
    const { send } = await chat();
    const location = (l: Record<string, unknown>) => send({ type: 'location', location: { latitude: 0, longitude: 0, ...l } });
    // Act
    const ok = await location({ latitude: -90, longitude: 180, name: 'n'.repeat(1000), address: 'a'.repeat(1000) });
    const ok2 = await location({ latitude: 90, longitude: -180 });
    const bad = await Promise.all([{ latitude: 90.0001 }, { latitude: -90.0001 }, { longitude: 180.0001 }, { longitude: -180.0001 }, { name: 'n'.repeat(1001) }, { address: 'a'.repeat(1001) }].map(location));
    // Assess
    expect([ok.status, ok2.status]).toEqual([200, 200]);
    expect(ok.body.data.messageType).toBe('location');
    expect(bad.map((r) => [r.status, r.body.error])).toEqual(Array(6).fill([400, 'validation_error']));
  });

  it('reacts by service id or wamid, removes with an empty emoji, and needs an open window', async () => {
    // Prepare
    const { t, send } = await chat();
    const target = await send({ content: 'hola' });
    const closedTo = randomPhone();
    const template = await t.call('POST', '/messages/v1', { to: closedTo, type: 'template', templateName: 'order_update', template_parameters: ['Ana', 'A-1'] });
    // Act
    const byId = await send({ type: 'reaction', reaction: { message_id: target.body.data.id, emoji: '👍' } });
    const byWamid = await send({ type: 'reaction', reaction: { message_id: target.body.messages[0].wamid, emoji: '' } });
    const closed = await t.call('POST', '/messages/v1', { to: closedTo, type: 'reaction', reaction: { message_id: template.body.data.id, emoji: '👍' } });
    // Assess
    expect([byId.status, byWamid.status]).toEqual([200, 200]);
    expect(byId.body.data.messageType).toBe('reaction');
    expect(closed.status).toBe(400);
    expect(closed.body).toMatchObject({ error: 'message_delivery_failed', code: '131047', data: { id: expect.stringMatching(UUID), status: 'failed' } });
  });

  it('reacts only to messages of the last 30 days', async () => {
    // Prepare: two customer messages, 29 and 31 days old, then a fresh one that opens the window.
    const t = await m.tenant();
    const to = randomPhone();
    const day = 24 * 3600 * 1000;
    const recent = await t.inbound(to, 'hace 29 días', { timestamp: new Date(Date.now() - 29 * day).toISOString() });
    const old = await t.inbound(to, 'hace 31 días', { timestamp: new Date(Date.now() - 31 * day).toISOString() });
    await t.inbound(to, 'hoy');
    const react = (wamid: string) => t.call('POST', '/messages/v1', { to, type: 'reaction', reaction: { message_id: wamid, emoji: '❤️' } });
    // Act
    const ok = await react(recent.wamid);
    const tooOld = await react(old.wamid);
    // Assess
    expect(ok.status).toBe(200);
    expect(tooOld.status).toBe(400);
    expect(tooOld.body.message).toEqual(expect.stringContaining('30 days'));
  });
});

describe('Template messages', () => {
  it('shortcut language defaults to es_MX: order_update is sent in es_MX, hello_world (en_US) is 132000', async () => {
    // Prepare
    const t = await m.tenant();
    const to = randomPhone();
    // Act
    const ok = await t.call('POST', '/messages/v1', { to, type: 'template', templateName: 'order_update', template_parameters: ['Ana', 'A-1'] });
    const sent = (await m.sent(to)).at(-1);
    const missing = await t.call('POST', '/messages/v1', { to, type: 'template', templateName: 'hello_world' });
    // Assess
    expect(ok.status).toBe(200);
    expect(sent.template).toMatchObject({ name: 'order_update', language: { code: 'es_MX' }, components: [{ type: 'body', parameters: [{ type: 'text', text: 'Ana' }, { type: 'text', text: 'A-1' }] }] });
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ error: 'template_not_found', code: '132000', details: { template_name: 'hello_world', language: 'es_MX' }, data: { status: 'failed' } });
  });

  it('invalid_template_parameters when the count differs from the placeholders', async () => {
    // Prepare
    const t = await m.tenant();
    // Act
    const res = await t.call('POST', '/messages/v1', { to: randomPhone(), type: 'template', templateName: 'order_update', template_parameters: ['Ana'] });
    // Assess
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'invalid_template_parameters', message: expect.any(String) });
  });

  it('resolves quick-reply payloads: override only when allowed, then the configured buttonId, then btn_{index}_{name}', async () => {
    // Prepare
    const t = await m.tenant();
    const to = randomPhone();
    const template = { name: 'reminder_buttons', language: { code: 'es_MX', policy: 'deterministic' }, components: [
      { type: 'body', parameters: [{ type: 'text', text: 'Ana' }] },
      { type: 'button', sub_type: 'quick_reply', index: '0', parameters: [{ type: 'payload', payload: 'MINE_0' }] },
      { type: 'button', sub_type: 'quick_reply', index: '1', parameters: [{ type: 'payload', payload: 'MINE_1' }] },
    ] };
    const payloads = async () => (await m.sent(to)).at(-1).template.components.filter((c: any) => c.type === 'button').map((c: any) => c.parameters[0].payload);
    // Act
    await t.call('POST', '/messages/v1', { to, type: 'template', template });
    const withoutOverride = await payloads();
    await t.call('POST', '/messages/v1', { to, type: 'template', template, allowButtonIdOverride: true });
    const withOverride = await payloads();
    // Assess
    expect(withoutOverride).toEqual(['confirm_appointment', 'btn_1_reminder_buttons']);
    expect(withOverride).toEqual(['MINE_0', 'MINE_1']);
  });

  it('refuses a button index outside 0-9 and a url button without its one text parameter', async () => {
    // Prepare
    const t = await m.tenant();
    const send = (components: unknown[]) => t.call('POST', '/messages/v1', { to: randomPhone(), type: 'template', template: { name: 'reminder_buttons', language: { code: 'es_MX' }, components } });
    // Act
    const index10 = await send([{ type: 'button', sub_type: 'quick_reply', index: '10', parameters: [] }]);
    const url = await send([{ type: 'button', sub_type: 'url', index: '0', parameters: [] }]);
    // Assess
    expect(index10.status).toBe(400);
    expect(index10.body.details).toHaveProperty(['template.components.0.index']);
    expect(url.status).toBe(400);
    expect(url.body.error).toBe('validation_error');
  });

  it('header_media: a media id placed in url is normalised; a foreign media id is MEDIA_PERMISSION_DENIED with a hint', async () => {
    // Prepare
    const t = await m.tenant();
    const to = randomPhone();
    const form = new FormData();
    form.set('type', 'image');
    form.set('file', new Blob([(await smallPng()) as Uint8Array<ArrayBuffer>]), 'a.png');
    const uploaded = (await (await fetch(`${m.stack.url}/media/v1`, { method: 'POST', headers: { authorization: `Bearer ${t.apiKey}` }, body: form })).json()) as any;
    const base = { to, type: 'template', templateName: 'promo_header', template_parameters: ['Ana'] };
    // Act
    const inUrl = await t.call('POST', '/messages/v1', { ...base, header_media: { type: 'image', url: uploaded.media_id } });
    const header = (await m.sent(to)).at(-1).template.components.find((c: any) => c.type === 'header');
    const foreign = await t.call('POST', '/messages/v1', { ...base, header_media: { type: 'image', media_id: '999999999' } });
    // Assess
    expect(inUrl.status).toBe(200);
    expect(header.parameters[0]).toEqual({ type: 'image', image: { id: uploaded.media_id } });
    expect(foreign.body).toMatchObject({ code: 'MEDIA_PERMISSION_DENIED', hint: expect.any(String) });
  });
});

describe('Upstream delivery codes, message status and retry', () => {
  it.each([
    ['130472', 'invalid_recipient'],
    ['131026', 'user_blocked'],
    ['131042', 'message_delivery_failed'],
    ['131048', 'spam_rate_limit'],
  ])('a recipient ending in %s gets %s with the delivery-failure body, stored as failed', async (code, error) => {
    // Prepare
    const t = await m.tenant();
    // Act
    const res = await t.call('POST', '/messages/v1', { to: randomPhone(code), type: 'template', templateName: 'order_update', template_parameters: ['a', 'b'] });
    const stored = await t.call('GET', `/messages/v1/${res.body.data?.id}`);
    // Assess
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error, code, message: expect.any(String), action_required: expect.any(String), instructions: expect.any(String), data: { id: expect.stringMatching(UUID), status: 'failed' } });
    expect(stored.body.message.status).toBe('failed');
  });

  it('retry: 404 not_found, 400 invalid_state, 400 retry_failed with code and action_required, then 200 with retriedAt', async () => {
    // Prepare
    const { t, send } = await chat();
    const sent = await send({ content: 'hola' });
    const to = randomPhone();
    const failed = await t.call('POST', '/messages/v1', { to, type: 'image', image: { link: 'https://example.com/a.jpg', caption: 'la foto' } });
    // Act
    const missing = await t.call('POST', '/messages/v1/00000000-0000-4000-8000-000000000000/retry');
    const notFailed = await t.call('POST', `/messages/v1/${sent.body.data.id}/retry`);
    const still = await t.call('POST', `/messages/v1/${failed.body.data.id}/retry`);
    await t.inbound(to);
    const ok = await t.call('POST', `/messages/v1/${failed.body.data.id}/retry`);
    // Assess
    expect(failed.body).toMatchObject({ code: '131047', data: { status: 'failed' } });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe('not_found');
    expect(notFailed.status).toBe(400);
    expect(notFailed.body.error).toBe('invalid_state');
    expect(still.status).toBe(400);
    expect(still.body).toMatchObject({ error: 'retry_failed', code: '131047', action_required: expect.any(String) });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ message: expect.any(String), data: { id: failed.body.data.id, messageId: expect.any(String), status: 'sent', retriedAt: expect.any(String) } });
    expect((await m.sent(to)).at(-1).image).toMatchObject({ caption: 'la foto' });
  });
});

describe('Media', () => {
  it('upload: the Uploaded media result; JSON, a disallowed type and an oversize file are refused with the contract messages', async () => {
    // Prepare
    const t = await m.tenant();
    const upload = async (type: string, bytes: Buffer, name: string) => {
      const form = new FormData();
      form.set('type', type);
      form.set('file', new Blob([bytes as Uint8Array<ArrayBuffer>]), name);
      const res = await fetch(`${m.stack.url}/media/v1`, { method: 'POST', headers: { authorization: `Bearer ${t.apiKey}` }, body: form });
      return { status: res.status, body: (await res.json()) as any };
    };
    const png = await smallPng();
    // Act
    const ok = await upload('image', png, 'a.png');
    const json = await t.call('POST', '/media/v1', { type: 'image' });
    const wrongType = await upload('image', Buffer.from('plain text, not an image'), 'a.txt');
    const tooLarge = await upload('sticker', Buffer.alloc(500 * 1024 + 1, 1), 'a.webp');
    const noTypeForm = new FormData();
    noTypeForm.set('file', new Blob([png as Uint8Array<ArrayBuffer>]), 'a.png');
    const noType = await fetch(`${m.stack.url}/media/v1`, { method: 'POST', headers: { authorization: `Bearer ${t.apiKey}` }, body: noTypeForm });
    const noTypeBody = (await noType.json()) as any;
    // Assess
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ media_id: expect.any(String), mime_type: 'image/png', file_size: png.length, type: 'image' });
    expect(json.status).toBe(400);
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.message).toEqual(expect.stringContaining('image/jpeg, image/png, image/webp'));
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body).toMatchObject({ error: 'media_too_large', message: expect.stringContaining('500 KB'), suggestion: expect.not.stringContaining('autoConvert') });
    expect(noType.status).toBe(400);
    expect(noTypeBody).toMatchObject({ error: 'validation_error', details: { type: [expect.stringContaining('is required')] } });
  });

  it('413 media_too_large with message, suggestion and limits as strings; autoConvert sends a video as a document with metadata', async () => {
    // Prepare
    const { send } = await chat();
    // Act
    const refused = await send({ type: 'video', video: { link: `${filesUrl}/big-clip.mp4` } });
    const converted = await send({ type: 'video', video: { link: `${filesUrl}/big-clip.mp4` }, autoConvert: true });
    // Assess
    expect(refused.status).toBe(413);
    expect(refused.body).toMatchObject({ error: 'media_too_large', message: expect.any(String), suggestion: expect.any(String), limits: LIMITS });
    expect(converted.status).toBe(200);
    expect(converted.body.data).toMatchObject({ messageType: 'document', metadata: { originalType: 'video', wasConverted: true, reason: expect.any(String) } });
  });

  it.each([
    ['image', '/garbage.jpg'],
    ['audio', '/garbage.mp3'],
  ])('an oversize %s that cannot be compressed is 413 without autoConvert and a document with it', async (type, path) => {
    // Prepare
    const { send } = await chat();
    // Act
    const refused = await send({ type, [type]: { link: `${filesUrl}${path}` } });
    const converted = await send({ type, [type]: { link: `${filesUrl}${path}` }, autoConvert: true });
    // Assess
    expect(refused.status).toBe(413);
    expect(refused.body).toMatchObject({ error: 'media_too_large', limits: LIMITS });
    expect(converted.status).toBe(200);
    expect(converted.body.data).toMatchObject({ messageType: 'document', metadata: { originalType: type, wasConverted: true, reason: expect.any(String) } });
  }, 60_000);

  it('a sticker over 500 KB is 413 even with autoConvert (the autoConvert table has no sticker row)', async () => {
    // Prepare
    const { send } = await chat();
    // Act
    const res = await send({ type: 'sticker', sticker: { link: `${filesUrl}/big.webp` }, autoConvert: true });
    // Assess
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ error: 'media_too_large', message: expect.stringContaining('500 KB'), suggestion: expect.not.stringContaining('autoConvert'), limits: LIMITS });
  });

  it('measures a link whose server does not answer HEAD (413 for an oversize video)', async () => {
    // Prepare
    const { send } = await chat();
    // Act
    const res = await send({ type: 'video', video: { link: `${filesUrl}/get-only/big-clip.mp4` } });
    // Assess
    expect(res.status).toBe(413);
    expect(res.body.error).toBe('media_too_large');
  });

  it('caption: 1024 characters accepted, 1025 refused; audio takes no caption', async () => {
    // Prepare
    const { send } = await chat();
    // Act
    const max = await send({ type: 'image', image: { link: 'https://example.com/a.jpg', caption: 'c'.repeat(1024) } });
    const over = await send({ type: 'image', image: { link: 'https://example.com/a.jpg', caption: 'c'.repeat(1025) } });
    const audio = await send({ type: 'audio', audio: { link: 'https://example.com/a.mp3', caption: 'c' } });
    // Assess
    expect(max.status).toBe(200);
    expect(over.status).toBe(400);
    expect(over.body.details).toHaveProperty(['image.caption']);
    expect(audio.status).toBe(400);
  });
});
