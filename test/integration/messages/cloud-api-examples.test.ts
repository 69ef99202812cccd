/**
 * Every request example of `POST /{Version}/{Phone-Number-ID}/messages` in Meta's OpenAPI description
 * (test/fixtures/cloud-api/send-examples.json, placeholders filled here) goes through `POST /messages/v1`, and the
 * sandbox receives the same message object. The only differences allowed are the contract's own: `to` with its
 * leading +, `recipient_type` and `type` made explicit, and on POST /messages/v1 quick-reply payloads resolved as the
 * contract orders (shared/templates/prepare.ts). Components stay in their order and form, and none is added where none was sent.
 */
import fixture from '../../fixtures/cloud-api/send-examples.json' with { type: 'json' };
import { startHarness, type Harness } from './harness.ts';
import { TEST_UPSTREAM } from '../../support/upstream-secret.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h?.stop());

const TINY: Record<string, [string, Buffer]> = {
  image: ['image/png', Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64')],
  video: ['video/mp4', Buffer.alloc(64, 1)],
  audio: ['audio/mpeg', Buffer.alloc(64, 2)],
  document: ['application/pdf', Buffer.from('%PDF-1.4\n%%EOF\n')],
  sticker: ['image/webp', Buffer.alloc(64, 3)],
};

/** Media uploaded straight to the sandbox for the sending number (ids the upstream knows). */
async function uploadToSandbox(phoneNumberId: string, type: string): Promise<string> {
  const [mime, bytes] = TINY[type];
  const form = new FormData();
  form.set('messaging_product', 'whatsapp');
  form.set('type', mime);
  form.set('file', new Blob([bytes], { type: mime }), `f.${type}`);
  const res = await fetch(`${h.sandbox.url}/v23.0/${phoneNumberId}/media`, { method: 'POST', headers: { authorization: `Bearer ${TEST_UPSTREAM.token}` }, body: form });
  return ((await res.json()) as { id: string }).id;
}

interface Filled {
  to: string;
  wamid: string;
  media: Record<string, string>;
}

const fill = (value: unknown, f: Filled): any =>
  JSON.parse(JSON.stringify(value), (_k, x) => {
    if (typeof x !== 'string' || !x.startsWith('$')) return x;
    if (x === '$TO') return f.to;
    if (x === '$TO_DIGITS') return f.to.slice(1);
    if (x === '$WAMID') return f.wamid;
    if (x.startsWith('$MEDIA_ID:')) return f.media[x.slice(10)];
    // Links are probed before sending (HEAD); the sandbox's own address answers at once.
    if (x.startsWith('$LINK:')) return `${h.sandbox.url}/files/${x.slice(6)}`;
    return x;
  });

const TYPES = ['text', 'image', 'video', 'audio', 'document', 'sticker', 'template', 'interactive', 'location', 'contacts', 'reaction'];

/**
 * What the upstream must receive for a request: the request itself, with only the contract's normalisations (quick-reply
 * payloads are resolved by POST /messages/v1; the Cloud API's own route sends them as given, as Meta does).
 */
export function expectedUpstream(request: Record<string, any>, quickRepliesAsSent = false): Record<string, any> {
  const type = request.type ?? TYPES.find((t) => request[t] !== undefined);
  const out: Record<string, any> = {
    ...request,
    type,
    recipient_type: 'individual',
    to: request.to.startsWith('+') ? request.to : `+${request.to}`,
    // A client's own value is forwarded unchanged; without one the service passes its message id (write-ahead send).
    biz_opaque_callback_data: request.biz_opaque_callback_data ?? expect.stringMatching(/^[0-9a-f-]{36}$/),
  };
  if (type === 'template' && request.template.components && !quickRepliesAsSent) {
    out.template = {
      ...request.template,
      components: request.template.components.map((c: Record<string, any>) =>
        c.type === 'button' && String(c.sub_type).toLowerCase() === 'quick_reply' ? { ...c, parameters: [{ type: 'payload', payload: expect.any(String) }] } : c),
    };
  }
  return out;
}

/** A tenant, a customer who wrote in (open window, a wamid to reply to), and a media id of each type. */
async function setUp() {
  const { t, to, wamid } = await h.openChat();
  const media: Record<string, string> = {};
  for (const type of Object.keys(TINY)) media[type] = await uploadToSandbox(t.phoneNumberId, type);
  return { t, filled: { to, wamid, media } };
}

const sends = fixture.examples.filter((e) => (e.request as Record<string, unknown>).status !== 'read');

describe("Meta's request examples through POST /messages/v1", () => {
  it('the fixture holds every example of the document (50) and no placeholder is left unfilled', async () => {
    expect(fixture.examples).toHaveLength(50);
    const { filled } = await setUp();
    const text = JSON.stringify(fixture.examples.map((e) => fill(e.request, filled)));
    expect(text).not.toMatch(/"\$[A-Z]|\{\{|http\(s\)/);
  });

});

/** Sends through one of the two routes; the compatible route answers in the Cloud API's own shape. */
const ROUTES = {
  'POST /messages/v1': (t: { apiKey: string }, body: unknown) => h.send(t.apiKey, body),
  'POST /{version}/{id}/messages': (t: { apiKey: string; phoneNumberId: string }, body: unknown) =>
    h.invoke('POST /{version}/{id}/messages', { apiKey: t.apiKey, body, params: { version: 'v23.0', id: t.phoneNumberId } }),
};

describe.each(Object.keys(ROUTES) as (keyof typeof ROUTES)[])("Meta's request examples through %s", (route) => {
  it.each(sends.map((e) => [e.name, e.request] as const))('%s: accepted and forwarded as the same message object', async (_name, example) => {
    // Prepare
    const { t, filled } = await setUp();
    const request = fill(example, filled);

    // Act
    const res = await ROUTES[route](t, request);

    // Assess
    expect({ status: res.status, body: res.status === 200 ? 'ok' : res.body }).toEqual({ status: 200, body: 'ok' });
    const received = (await h.sent(filled.to)).at(-1);
    const wamid = h.sandbox.state.sent.at(-1)!.wamid;
    if (route === 'POST /messages/v1') expect(res.body.messages).toEqual([{ id: res.body.data.id, wamid }]);
    // Meta's answer: a template it took is `accepted` (MessageResponsePayload.messages[].message_status).
    else expect(res.body).toEqual({ messaging_product: 'whatsapp', contacts: [{ input: request.to, wa_id: filled.to.slice(1) }], messages: [{ id: wamid, ...(request.type === 'template' ? { message_status: 'accepted' } : {}) }] });
    expect(received).toEqual(expectedUpstream(request, route !== 'POST /messages/v1'));
  });
});

describe("Meta's read receipt and typing indicator example through POST /messages/v1", () => {
  const example = fixture.examples.find((e) => e.name === 'Send typing indicator and read receipt')!.request;

  it('marks the customer message read upstream, shows typing, answers { success: true } and keeps the time on the message', async () => {
    // Prepare
    const { t, filled } = await setUp();

    // Act
    const res = await h.send(t.apiKey, fill(example, filled));

    // Assess
    expect(res).toMatchObject({ status: 200, body: { success: true } });
    expect(res.body.data).toBeUndefined();
    expect(h.sandbox.state.reads.filter((r) => r.messageId === filled.wamid)).toEqual([
      { phoneNumberId: t.phoneNumberId, messageId: filled.wamid, typingIndicator: { type: 'text' }, at: expect.any(String) },
    ]);
    const [conversation] = (await h.invoke('GET /conversations/v1', { apiKey: t.apiKey })).body.conversations;
    const { messages } = (await h.invoke('GET /conversations/v1/{id}/messages', { apiKey: t.apiKey, params: { id: conversation.id } })).body;
    const inbound = messages.find((m: any) => m.wamid === filled.wamid);
    expect(inbound.markedReadAt).toEqual(expect.any(String));
    expect(inbound.typingShownAt).toEqual(expect.any(String));
  });

  it("refuses another business's message with 404 and sends nothing upstream", async () => {
    const { filled } = await setUp();
    const other = await h.newTenant();
    const before = h.sandbox.state.reads.length;

    const res = await h.send(other.apiKey, fill(example, filled));

    expect(res).toMatchObject({ status: 404, body: { error: 'not_found' } });
    expect(h.sandbox.state.reads).toHaveLength(before);
  });

  it('refuses a typing indicator of another kind with 400 naming the field', async () => {
    const { t, filled } = await setUp();
    const res = await h.send(t.apiKey, { ...fill(example, filled), typing_indicator: { type: 'audio' } });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.details)).toContain('typing_indicator.type');
  });
});
