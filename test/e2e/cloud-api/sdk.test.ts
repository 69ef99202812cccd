/**
 * A Cloud API SDK from npm that this project did not write (@kapso/whatsapp-cloud-api), pointed at the local stack's
 * base URL with one of our API keys as its access token: its own calls for text, upload + media by id, media info,
 * download and delete, template list and send, an interactive list, a reply, a reaction and mark-as-read all pass,
 * and the sandbox receives what the SDK built.
 */
import { createHash } from 'node:crypto';
import { WhatsAppClient } from '@kapso/whatsapp-cloud-api';
import { startMessagingStack, randomPhone, type MessagingStack, type Tenant } from '../messages/stack.ts';

let m: MessagingStack;
beforeAll(async () => {
  m = await startMessagingStack();
}, 60_000);
afterAll(() => m?.stop());

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

async function chat(): Promise<{ t: Tenant; sdk: WhatsAppClient; to: string; wamid: string; wabaId: string }> {
  const t = await m.tenant();
  const to = randomPhone();
  const { wamid } = await t.inbound(to, 'Hola, ¿qué tienen?');
  const { getBusiness } = await import('#shared/business/repository.ts');
  const wabaId = (await getBusiness(t.businessId))!.wabaId!;
  return { t, sdk: new WhatsAppClient({ baseUrl: m.stack.url, accessToken: t.apiKey, graphVersion: 'v23.0' }), to, wamid, wabaId };
}

describe('@kapso/whatsapp-cloud-api against the service', () => {
  it('sends text, a reply, a reaction, an interactive list and a template, and marks the customer message read', async () => {
    // Prepare
    const { t, sdk, to, wamid, wabaId } = await chat();
    const phoneNumberId = t.phoneNumberId;

    // Act
    const text = await sdk.messages.sendText({ phoneNumberId, to, body: 'Hola, tenemos envíos.' });
    const reply = await sdk.messages.sendText({ phoneNumberId, to, body: 'Respondiendo a tu mensaje', contextMessageId: wamid });
    const reaction = await sdk.messages.sendReaction({ phoneNumberId, to, reaction: { messageId: wamid, emoji: '👍' } });
    const list = await sdk.messages.sendInteractiveList({
      phoneNumberId, to, bodyText: 'Elige una sucursal', buttonText: 'Ver',
      sections: [{ title: 'CDMX', rows: [{ id: 'centro', title: 'Centro', description: 'Zócalo' }, { id: 'roma', title: 'Roma' }] }],
    });
    const templates = await sdk.templates.list({ businessAccountId: wabaId });
    const template = await sdk.messages.sendTemplate({ phoneNumberId, to, template: { name: 'hello_world', language: { code: 'en_US' } } });
    const read = await sdk.messages.markRead({ phoneNumberId, messageId: wamid, typingIndicator: { type: 'text' } });

    // Assess
    // The last five: the demo's AI agent may have answered the customer before the first send.
    const sent = (await m.sent(to)).slice(-5);
    const wamids = (await m.sandbox('GET', `/__sandbox/sent?detail=1&to=${encodeURIComponent(to)}`)).body.slice(-5).map((x: any) => x.wamid);
    expect([text, reply, reaction, list, template].map((r: any) => r.messages[0].id)).toEqual(wamids);
    expect(text.contacts).toEqual([{ input: to, wa_id: to.slice(1) }]);
    expect(sent.map((p: any) => p.type)).toEqual(['text', 'text', 'reaction', 'interactive', 'template']);
    expect(sent[1]).toMatchObject({ context: { message_id: wamid }, text: { body: 'Respondiendo a tu mensaje' } });
    expect(sent[2].reaction).toEqual({ message_id: wamid, emoji: '👍' });
    expect(sent[3].interactive).toMatchObject({ type: 'list', action: { button: 'Ver', sections: [{ title: 'CDMX', rows: [{ id: 'centro' }, { id: 'roma' }] }] } });
    expect((templates as any).data.map((x: any) => x.name)).toContain('hello_world');
    expect((template as any).messages[0]).toEqual({ id: wamids[4], message_status: 'accepted' });
    expect((text as any).messages[0]).toEqual({ id: wamids[0] });
    expect(read).toEqual({ success: true });
    expect((await m.sandbox('GET', '/__sandbox/reads')).body).toEqual(expect.arrayContaining([expect.objectContaining({ messageId: wamid, typingIndicator: { type: 'text' } })]));
  }, 60_000);

  it('uploads media, sends it by id, reads its info, downloads it and deletes it', async () => {
    // Prepare
    const { t, sdk, to } = await chat();
    const phoneNumberId = t.phoneNumberId;

    // Act
    const uploaded = await sdk.media.upload({ phoneNumberId, type: 'image/png', file: new Blob([PNG], { type: 'image/png' }), fileName: 'dot.png' });
    const image = await sdk.messages.sendImage({ phoneNumberId, to, image: { id: uploaded.id, caption: 'Nuestro catálogo' } });
    // The upstream's media lookup failing does not take the hash away: the record carries it.
    await m.sandbox('POST', '/__sandbox/faults', { kind: 'error', code: 100, count: 1, target: 'media' });
    const info = await sdk.media.get({ mediaId: uploaded.id, phoneNumberId });
    // (A media id the service never stored is looked up upstream: that takes the fault if it is still there.)
    await fetch(`${m.stack.url}/v23.0/999000111`, { headers: { authorization: `Bearer ${t.apiKey}` } });
    const bytes = await sdk.media.download({ mediaId: uploaded.id, phoneNumberId });
    // As Meta's reference downloads it: the media URL with the access token.
    const withToken = await fetch((info as { url: string }).url, { headers: { authorization: `Bearer ${t.apiKey}` } });
    const forged = await fetch(`${m.stack.url}/media/v1/files/${Buffer.from('https://example.com/x?X-Amz-Signature=1&X-Amz-Expires=1').toString('base64url')}`, { redirect: 'manual' });
    const deleted = await sdk.media.delete({ mediaId: uploaded.id, phoneNumberId });
    const again = await fetch(`${m.stack.url}/v23.0/${uploaded.id}`, { headers: { authorization: `Bearer ${t.apiKey}` } });
    // As with Meta's, a deleted media id no longer sends.
    const afterDelete = await sdk.messages.sendImage({ phoneNumberId, to, image: { id: uploaded.id } }).then(() => 'sent', (err: { httpStatus?: number; raw?: unknown }) => err);

    // Assess
    expect(uploaded.id).toMatch(/^\d+$/);
    expect(image.messages[0].id).toMatch(/^wamid\./);
    expect((await m.sent(to)).at(-1)).toMatchObject({ type: 'image', image: { id: uploaded.id, caption: 'Nuestro catálogo' } });
    // file_size is a string in Meta's schema (example '303833').
    expect(info).toMatchObject({ messaging_product: 'whatsapp', id: uploaded.id, mime_type: 'image/png', file_size: String(PNG.length), sha256: createHash('sha256').update(PNG).digest('hex') });
    expect(Buffer.from(bytes as ArrayBuffer)).toEqual(PNG);
    expect((info as { url: string }).url.startsWith(`${m.stack.url}/media/v1/files/`)).toBe(true);
    expect(withToken.status).toBe(200);
    expect(Buffer.from(await withToken.arrayBuffer())).toEqual(PNG);
    expect(forged.status).toBe(404);
    expect(deleted).toEqual({ success: true });
    expect(again.status).toBe(400);
    expect(((await again.json()) as { error: { code: number; error_subcode: number } }).error).toMatchObject({ code: 100, error_subcode: 33 });
    expect(afterDelete).not.toBe('sent');
  }, 60_000);

  it("reads, downloads and deletes the media of a customer's message: an id in the upstream's store the service did not upload", async () => {
    // Prepare: the customer's photo, in the upstream store of the business's number (as Meta keeps inbound media).
    const { t, sdk } = await chat();
    const { SANDBOX_TOKEN } = await import('#infra/local/sandbox/credentials.ts');
    const form = new FormData();
    form.append('messaging_product', 'whatsapp');
    form.append('file', new Blob([PNG], { type: 'image/png' }), 'from-customer.png');
    const stored = await fetch(`${m.stack.sandboxUrl}/v23.0/${t.phoneNumberId}/media`, { method: 'POST', headers: { authorization: `Bearer ${SANDBOX_TOKEN}` }, body: form });
    const { id } = (await stored.json()) as { id: string };
    const other = await m.tenant();

    // Act
    const info = await sdk.media.get({ mediaId: id, phoneNumberId: t.phoneNumberId });
    const bytes = await sdk.media.download({ mediaId: id, phoneNumberId: t.phoneNumberId });
    const foreign = await fetch(`${m.stack.url}/v23.0/${id}`, { headers: { authorization: `Bearer ${other.apiKey}` } });
    const deleted = await sdk.media.delete({ mediaId: id, phoneNumberId: t.phoneNumberId });
    const upstreamAfter = await fetch(`${m.stack.sandboxUrl}/v23.0/${id}`, { headers: { authorization: `Bearer ${SANDBOX_TOKEN}` } });

    // Assess
    expect(stored.status).toBe(200);
    expect(info).toMatchObject({ messaging_product: 'whatsapp', id, mime_type: 'image/png', file_size: String(PNG.length), sha256: expect.any(String) });
    expect(Buffer.from(bytes as ArrayBuffer)).toEqual(PNG);
    expect(foreign.status).toBe(400);
    expect(deleted).toEqual({ success: true });
    expect(upstreamAfter.status).toBe(400);
  }, 60_000);

  it("follows Meta's optional parameters: a template by name, media only for the phone number named, an upload's kind from its bytes", async () => {
    // Prepare
    const { t, wabaId } = await chat();
    const graph = (path: string, init: RequestInit = {}) => fetch(`${m.stack.url}/v23.0/${path}`, { ...init, headers: { authorization: `Bearer ${t.apiKey}`, ...init.headers } });
    const upload = (file: Blob, type?: string) => {
      const form = new FormData();
      form.append('messaging_product', 'whatsapp');
      if (type !== undefined) form.append('type', type);
      form.append('file', file, 'file.bin');
      return graph(`${t.phoneNumberId}/media`, { method: 'POST', body: form });
    };

    // Act
    const byName = (await (await graph(`${wabaId}/message_templates?name=order_update`)).json()) as { data: { name: string }[] };
    const rejected = (await (await graph(`${wabaId}/message_templates?status=REJECTED`)).json()) as { data: unknown[] };
    const firstPage = (await (await graph(`${wabaId}/message_templates?limit=1&fields=name&summary=total_count`)).json()) as any;
    // pywa follows paging.next (a URL of this service, as Graph's are of Graph).
    const secondPage = (await (await fetch(firstPage.paging.next, { headers: { authorization: `Bearer ${t.apiKey}` } })).json()) as any;
    // Meta's own upload example: `type=ogg` (not a MIME type); and a PNG sent as octet-stream.
    const ogg = Buffer.concat([Buffer.from('OggS'), Buffer.alloc(24), Buffer.from('OpusHead'), Buffer.alloc(64)]);
    const audio = await upload(new Blob([ogg], { type: 'application/octet-stream' }), 'ogg');
    const png = await upload(new Blob([PNG], { type: 'application/octet-stream' }));
    const pngId = ((await png.json()) as { id: string }).id;
    // messaging_product in the query string, the form holding only the file (as whatsapp-api-js uploads); and in neither.
    const fileOnly = () => {
      const form = new FormData();
      form.append('file', new Blob([PNG], { type: 'image/png' }), 'dot.png');
      return form;
    };
    const inQuery = await graph(`${t.phoneNumberId}/media?messaging_product=whatsapp`, { method: 'POST', body: fileOnly() });
    const nowhere = await graph(`${t.phoneNumberId}/media`, { method: 'POST', body: fileOnly() });
    const otherNumber = await graph(`${pngId}?phone_number_id=100000000000999`);
    const deleteElsewhere = await graph(`${pngId}?phone_number_id=100000000000999`, { method: 'DELETE' });
    const own = await graph(`${pngId}?phone_number_id=${t.phoneNumberId}`);

    // Assess
    expect(byName.data.map((x) => x.name)).toEqual(['order_update']);
    expect(rejected.data).toEqual([]);
    expect(firstPage.data).toEqual([{ id: expect.any(String), name: expect.any(String) }]);
    expect(firstPage.summary.total_count).toBeGreaterThan(1);
    expect(secondPage.data).toHaveLength(1);
    expect(secondPage.data[0].name).not.toBe(firstPage.data[0].name);
    expect(firstPage.paging.previous).toBeUndefined();
    expect(secondPage.paging.previous).toMatch(new RegExp(`^${m.stack.url}/v23.0/${wabaId}/message_templates\\?.*before=`));
    expect(audio.status).toBe(200);
    expect(png.status).toBe(200);
    expect(inQuery.status).toBe(200);
    expect(await inQuery.json()).toEqual({ id: expect.stringMatching(/^\d+$/) });
    expect(nowhere.status).toBe(400);
    expect(((await nowhere.json()) as { error: { code: number; message: string } }).error).toMatchObject({ code: 100, message: expect.stringContaining('messaging_product') });
    expect([otherNumber.status, deleteElsewhere.status]).toEqual([400, 400]);
    expect(((await deleteElsewhere.json()) as { error: { code: number } }).error.code).toBe(100);
    expect(own.status).toBe(200);
    expect(await own.json()).toMatchObject({ id: pngId, mime_type: 'image/png' });
  }, 60_000);

  it('takes the access token in the query string on the Graph paths, as Chatwoot lists templates and Graph accepts it; not on the service\'s own paths', async () => {
    // Prepare
    const { t, wabaId } = await chat();

    // Act: no Authorization header
    const templates = await fetch(`${m.stack.url}/v14.0/${wabaId}/message_templates?access_token=${t.apiKey}`);
    const wrong = await fetch(`${m.stack.url}/v14.0/${wabaId}/message_templates?access_token=wak_${'x'.repeat(40)}`);
    const own = await fetch(`${m.stack.url}/team/v1?access_token=${t.apiKey}`);

    // Assess
    expect(templates.status).toBe(200);
    expect(((await templates.json()) as { data: { name: string }[] }).data.map((x) => x.name)).toContain('order_update');
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as any).error).toMatchObject({ code: 190, type: 'OAuthException' });
    expect(own.status).toBe(401);
  });

  it("answers Graph's versionless calls (the app's default version), as clients that resolve paths against a base URL ending in /v23.0 make them", async () => {
    // Prepare
    const { t, to, wabaId } = await chat();
    const call = (path: string, init: RequestInit = {}) => fetch(`${m.stack.url}/${path}`, { ...init, headers: { authorization: `Bearer ${t.apiKey}`, ...init.headers } });
    const form = new FormData();
    form.append('messaging_product', 'whatsapp');
    form.append('file', new Blob([PNG], { type: 'image/png' }), 'dot.png');

    // Act
    const sent = await call(`${t.phoneNumberId}/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ messaging_product: 'whatsapp', to: to.slice(1), type: 'text', text: { body: 'sin versión' } }) });
    const uploaded = await call(`${t.phoneNumberId}/media`, { method: 'POST', body: form });
    const templates = await call(`${wabaId}/message_templates?name=hello_world`);
    const foreign = await call('100000000000999/messages', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ messaging_product: 'whatsapp', to: to.slice(1), type: 'text', text: { body: 'x' } }) });

    // Assess
    expect(sent.status).toBe(200);
    expect(await sent.json()).toMatchObject({ messaging_product: 'whatsapp', messages: [{ id: expect.stringMatching(/^wamid\./) }] });
    expect((await m.sent(to)).at(-1)).toMatchObject({ type: 'text', text: { body: 'sin versión' } });
    expect(uploaded.status).toBe(200);
    expect(((await templates.json()) as { data: { name: string }[] }).data.map((x) => x.name)).toEqual(['hello_world']);
    expect(foreign.status).toBe(400);
    expect(((await foreign.json()) as { error: { code: number; error_subcode: number } }).error).toMatchObject({ code: 100, error_subcode: 33 });
  }, 60_000);

  it("surfaces the service's refusals as the Graph errors the SDK knows", async () => {
    const { t, sdk, to } = await chat();
    // A method the path does not take: 405 with Allow, in the Graph API's error shape.
    const wrongMethod = await fetch(`${m.stack.url}/v23.0/${t.phoneNumberId}/messages`, { headers: { authorization: `Bearer ${t.apiKey}` } });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('POST');
    expect(await wrongMethod.json()).toEqual({ error: { message: expect.stringMatching(/^\(#100\) Unsupported get request/), type: 'GraphMethodException', code: 100, error_data: { messaging_product: 'whatsapp', details: 'Allowed methods: POST' }, fbtrace_id: expect.any(String) } });
    const other = await m.tenant();
    await expect(sdk.messages.sendText({ phoneNumberId: other.phoneNumberId, to, body: 'x' })).rejects.toMatchObject({ httpStatus: 400, code: 100 });
    await expect(sdk.messages.sendText({ phoneNumberId: t.phoneNumberId, to: randomPhone(), body: 'x' })).rejects.toMatchObject({ code: 131047 });
  }, 60_000);
});
