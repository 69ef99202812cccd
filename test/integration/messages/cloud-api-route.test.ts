/**
 * POST /{version}/{id}/messages speaks the Graph API: Graph error bodies with Meta's statuses and codes,
 * the key's own phone number only, and the same pipeline as POST /messages/v1 (idempotency, window, bounds).
 */
import { startHarness, randomPhone, type Harness } from './harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h?.stop());

const ROUTE = 'POST /{version}/{id}/messages';
/** Graph's error object; a failure worth asking again for (throttling, 5xx) carries `is_transient`, as Meta's do. */
const graphError = (code: number, transient = false) => ({
  error: {
    message: expect.stringMatching(new RegExp(`^\\(#${code}\\) `)), type: expect.any(String), code, error_data: { messaging_product: 'whatsapp', details: expect.any(String) }, fbtrace_id: expect.any(String),
    ...(transient ? { is_transient: true } : {}),
  },
});
/** Graph's answer for an object that does not exist for the caller: HTTP 400, GraphMethodException 100, subcode 33. */
const unknownObject = (id: string) => ({
  error: {
    message: expect.stringMatching(new RegExp(`^\\(#100\\) Unsupported (get|post|delete) request\\. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation\\. Please read the Graph API documentation at https://developers\\.facebook\\.com/docs/graph-api$`)),
    type: 'GraphMethodException', code: 100, error_subcode: 33, error_data: { messaging_product: 'whatsapp', details: expect.any(String) }, fbtrace_id: expect.any(String),
  },
});

const post = (t: { apiKey?: string; phoneNumberId: string }, body: unknown, extra: { version?: string; phoneNumberId?: string; headers?: Record<string, string> } = {}) =>
  h.invoke(ROUTE, { ...(t.apiKey ? { apiKey: t.apiKey } : {}), body, headers: extra.headers ?? {}, params: { version: extra.version ?? 'v23.0', id: extra.phoneNumberId ?? t.phoneNumberId } });
const text = (to: string, body = 'hola') => ({ messaging_product: 'whatsapp', recipient_type: 'individual', to: to.slice(1), type: 'text', text: { body } });

describe('POST /{version}/{id}/messages', () => {
  it("answers another business's phone number id as Graph answers an unknown object (400, code 100, subcode 33) and sends nothing", async () => {
    const { t, to } = await h.openChat();
    const other = await h.newTenant();

    const res = await post(t, text(to), { phoneNumberId: other.phoneNumberId });

    expect(res.status).toBe(400);
    expect(res.body).toEqual(unknownObject(other.phoneNumberId));
    expect(await h.sent(to)).toEqual([]);
  });

  it('requires messaging_product, as Meta does, and sends nothing without it', async () => {
    const { t, to } = await h.openChat();
    const { messaging_product: _, ...body } = text(to);

    const res = await post(t, body);

    expect(res.status).toBe(400);
    expect(res.body).toEqual(graphError(100));
    expect(res.body.error.message).toBe('(#100) The parameter messaging_product is required.');
    // Sent as null, it is not sent either.
    const asNull = await post(t, { ...body, messaging_product: null });
    expect([asNull.status, asNull.body.error.message]).toEqual([400, '(#100) The parameter messaging_product is required.']);
    expect(await h.sent(to)).toEqual([]);
  });

  it("answers a media id longer than any Graph id as an unknown object (400, code 100, subcode 33), on GET and DELETE", async () => {
    const { t } = await h.openChat();
    const id = 'a'.repeat(2100);

    const got = await h.invoke('GET /{version}/{id}', { apiKey: t.apiKey, params: { version: 'v23.0', id } });
    const deleted = await h.invoke('DELETE /{version}/{id}', { apiKey: t.apiKey, params: { version: 'v23.0', id } });

    expect([got.status, deleted.status]).toEqual([400, 400]);
    expect(got.body).toEqual({ error: { ...graphError(100).error, error_subcode: 33, type: 'GraphMethodException' } });
    expect(deleted.body).toEqual({ error: { ...graphError(100).error, error_subcode: 33, type: 'GraphMethodException' } });
  });

  it('answers an invalid message with a Graph 400 (code 100) naming the field', async () => {
    const { t, to } = await h.openChat();
    const res = await post(t, { ...text(to), text: { body: '' } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(graphError(100));
    expect(res.body.error.error_data.details).toContain('text.body');
  });

  it("answers a closed 24-hour window with the upstream's own code 131047", async () => {
    const t = await h.newTenant();
    const res = await post(t, text(randomPhone()));
    expect(res.status).toBe(400);
    expect(res.body).toEqual(graphError(131047));
  });

  it("passes the upstream's refusal on as Meta answered it: status, message, details, subcode and trace id", async () => {
    // Prepare: the upstream refuses with an error object of its own words
    const { t, to } = await h.openChat();
    const meta = { code: 131049, status: 400, subcode: 2494010, message: 'This message was not delivered to maintain healthy ecosystem engagement.', details: 'In order to maintain a healthy ecosystem engagement, the message failed to be delivered.' };
    await h.sandboxCall('POST', '/__sandbox/faults', { kind: 'error', ...meta, target: 'messages' });

    // Act
    const res = await post(t, text(to));

    // Assess: the sandbox's error object, unchanged (its trace id is its own, not the request's)
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: {
      message: `(#131049) ${meta.message}`, type: 'OAuthException', code: 131049, error_subcode: 2494010,
      error_data: { messaging_product: 'whatsapp', details: meta.details }, fbtrace_id: expect.stringMatching(/^[\w-]{16}$/),
    } });
  });

  it("answers a template's parameters that do not fit its placeholders with Meta's 132000", async () => {
    const { t, to } = await h.openChat();
    const res = await post(t, { messaging_product: 'whatsapp', to: to.slice(1), type: 'template', template: { name: 'order_update', language: { code: 'es_MX' }, components: [{ type: 'body', parameters: [{ type: 'text', text: 'Ana' }] }] } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(graphError(132000));
    expect(await h.sent(to)).toEqual([]);
  });

  it('answers a missing API key with Graph code 190 (401)', async () => {
    const { t, to } = await h.openChat();
    const res = await post({ phoneNumberId: t.phoneNumberId }, text(to));
    expect(res.status).toBe(401);
    expect(res.body).toEqual(graphError(190));
  });

  it('is not a Graph path without a vNN.N version: the service\'s own 404', async () => {
    const { t, to } = await h.openChat();
    const res = await post(t, text(to), { version: 'latest' });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ error: 'not_found' });
    expect(await h.sent(to)).toEqual([]);
  });

  it('sends once for a repeated Idempotency-Key, like POST /messages/v1', async () => {
    const { t, to } = await h.openChat();
    const headers = { 'idempotency-key': `k-${to}` };
    const first = await post(t, text(to), { headers });
    const second = await post(t, text(to), { headers });
    expect(first.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(await h.sent(to)).toHaveLength(1);
  });

  it("answers a repeat under the same Idempotency-Key of a send Meta refused with Meta's refusal again, subcode and fbtrace_id too", async () => {
    // Prepare
    const { t, to } = await h.openChat();
    await h.sandboxCall('POST', '/__sandbox/faults', { kind: 'error', code: 131009, subcode: 2494010, status: 400, details: 'bad param x', target: 'messages' });
    const headers = { 'idempotency-key': `refused-${to}` };
    const first = await post(t, text(to), { headers });

    // Act
    const repeat = await post(t, text(to), { headers });

    // Assess
    expect(first.body.error).toMatchObject({ code: 131009, error_subcode: 2494010, fbtrace_id: expect.any(String) });
    expect([repeat.status, repeat.body]).toEqual([first.status, first.body]);
  });

  it("sends a template's quick-reply payloads as the client sent them, as Meta does, adding no button it left out", async () => {
    // Prepare: reminder_buttons has quick replies at 0 (configured id confirm_appointment) and 1; the client sends only 1.
    const { t, to } = await h.openChat();
    const template = {
      name: 'reminder_buttons', language: { code: 'es_MX' },
      components: [
        { type: 'body', parameters: [{ type: 'text', text: 'Ana' }] },
        { type: 'button', sub_type: 'quick_reply', index: 1, parameters: [{ type: 'payload', payload: 'no-thanks' }] },
      ],
    };

    // Act
    const res = await post(t, { messaging_product: 'whatsapp', to: to.slice(1), type: 'template', template });

    // Assess
    expect(res.status).toBe(200);
    expect((await h.sent(to)).at(-1).template.components).toEqual(template.components);
  });

  it('takes contact cards given as a JSON string (Graph decodes it; whatsapp-api-js sends them so) and sends them as the array', async () => {
    const { t, to } = await h.openChat();
    const cards = [{ name: { formatted_name: 'Ana Pérez', first_name: 'Ana' }, phones: [{ phone: '+5215512345678', type: 'CELL' }] }];

    const res = await post(t, { messaging_product: 'whatsapp', to: to.slice(1), type: 'contacts', contacts: JSON.stringify(cards) });
    const notJson = await post(t, { messaging_product: 'whatsapp', to: to.slice(1), type: 'contacts', contacts: '[{name' });
    const tooDeep = await post(t, { messaging_product: 'whatsapp', to: to.slice(1), type: 'contacts', contacts: `[{"name":{"formatted_name":"A"},"org":${'['.repeat(10_000)}${']'.repeat(10_000)}}]` });

    expect(res.status).toBe(200);
    expect((await h.sent(to)).at(-1).contacts).toEqual(cards);
    expect([notJson.status, tooDeep.status]).toEqual([400, 400]);
    expect(notJson.body).toEqual(graphError(100));
  });

  it("forwards what Meta takes and the service used to refuse or drop (the outbound audit's bodies)", async () => {
    const { t, to } = await h.openChat();
    const base = { messaging_product: 'whatsapp', to: to.slice(1) };
    const hash = { ...base, recipient_identity_key_hash: 'DF2lS5v2W6x=', type: 'text', text: { body: 'only if the hash matches' } };
    const emails = ["o'brien@acme.com", 'ana@xn--acm-loa.com', 'ana@my--shop.com', 'a@b.c', '"ana b"@acme.com', 'ana@localhost'];
    const card = { ...base, type: 'contacts', contacts: [{ name: { formatted_name: 'A', first_name: 'A' }, emails: emails.map((email) => ({ email })) }] };
    // pywa's FlowButton without a token.
    const flow = {
      ...base, type: 'interactive',
      interactive: { type: 'flow', body: { text: 'b' }, action: { name: 'flow', parameters: { mode: 'published', flow_message_version: '3', flow_token: null, flow_id: '1234567890', flow_cta: 'Sign up' } } },
    };

    const sent = [];
    for (const body of [hash, card, flow]) {
      const res = await post(t, body);
      expect(res.status).toBe(200);
      sent.push((await h.sent(to)).at(-1));
    }

    expect(sent[0]).toMatchObject({ recipient_identity_key_hash: 'DF2lS5v2W6x=', text: { body: 'only if the hash matches' } });
    expect(sent[1].contacts).toEqual(card.contacts);
    expect(sent[2].interactive).toEqual(flow.interactive);
    const noAt = await post(t, { ...card, contacts: [{ name: { formatted_name: 'A' }, emails: [{ email: 'no-at-sign' }] }] });
    expect(noAt.status).toBe(400);
  });

  it.each([
    ['a permission error (10)', { code: 10, status: 403 }, 403, 10],
    // A 5xx is retried: it fails every attempt.
    ['a capability error (3)', { code: 3, status: 500, count: 3 }, 500, 3],
    // Meta's own status for its code, whatever a table says (131000 is usually a 500).
    ['a generic error (131000) answered with 400', { code: 131000, status: 400 }, 400, 131000],
    ['a token error (190)', { code: 190, status: 401 }, 401, 190],
    ['a permission error (200)', { code: 200, status: 403 }, 403, 200],
  ])('answers %s of the upstream with Meta\'s code and status', async (_label, fault, status, code) => {
    const { t, to } = await h.openChat();
    await h.sandboxCall('POST', '/__sandbox/faults', { kind: 'error', count: 1, ...fault, target: 'messages' });
    const res = await post(t, text(to));
    expect(res.status).toBe(status);
    expect(res.body).toEqual(graphError(code, status >= 500));
  });

  it("answers a send the upstream never accepted with Meta's 131000 and its status (500), naming the stored message to retry", async () => {
    const { t, to } = await h.openChat();
    // As many 500s as a send's attempts (POST /messages/v1's own test uses the same).
    await h.sandboxCall('POST', '/__sandbox/faults', { kind: 'error500', count: 3, target: 'messages' });
    const res = await post(t, text(to));
    expect(res.status).toBe(500);
    expect(res.body).toEqual(graphError(131000, true));
    const [id] = res.body.error.error_data.details.match(/[0-9a-f-]{36}/) ?? [];
    expect((await h.invoke('GET /messages/v1/{id}', { apiKey: t.apiKey, params: { id } })).body.message).toMatchObject({ id, status: 'failed' });
  });

  it("answers a media id the sending number cannot use as the upstream's invalid parameter (400, code 100), sending nothing", async () => {
    const { t, to } = await h.openChat();
    const theirs = h.sandbox.state.addMedia('100000000000999', Buffer.from('jpeg'), 'image/jpeg');
    const res = await post(t, { messaging_product: 'whatsapp', to: to.slice(1), type: 'image', image: { id: theirs.id } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(graphError(100));
    expect((await h.sent(to)).filter((p) => p.type === 'image')).toEqual([]);
  });

  it('replies by the service message id as by the wamid: context.message_id goes upstream as the wamid; an id it does not know goes as given', async () => {
    const { t, to } = await h.openChat();
    const first = await h.send(t.apiKey, { to, type: 'text', content: 'primero' });
    const reply = (messageId: string) => post(t, { messaging_product: 'whatsapp', to: to.slice(1), type: 'text', context: { message_id: messageId }, text: { body: 'respuesta' } });
    const unknownId = '7f005d8a-3fba-44fc-b523-231c1b0087f5';

    const byId = await reply(first.body.data.id);
    expect(byId.status).toBe(200);
    expect((await h.sent(to)).at(-1)).toMatchObject({ context: { message_id: first.body.messages[0].wamid }, text: { body: 'respuesta' } });
    const [{ id: replyWamid }] = byId.body.messages;
    const [stored] = (await h.invoke('GET /conversations/v1/{id}/messages', { apiKey: t.apiKey, params: { id: first.body.data.conversationId } })).body.messages;
    expect(stored).toMatchObject({ wamid: replyWamid, context: { message_id: first.body.messages[0].wamid } });
    // A UUID the service does not know, as netflie's tests reply to: the Cloud API's clients' ids go upstream as given.
    const unknown = await reply(unknownId);
    expect(unknown.status).toBe(200);
    expect((await h.sent(to)).at(-1)).toMatchObject({ context: { message_id: unknownId } });
    // In service style a UUID is a service message id: one that names no message is a mistake, told at once.
    const serviceStyle = await h.send(t.apiKey, { to, content: 'respuesta', context: { message_id: unknownId } });
    expect(serviceStyle.status).toBe(400);
    expect(serviceStyle.body.details).toHaveProperty(['context.message_id']);
  });

  it('marks a customer message read with the Cloud API body', async () => {
    const { t, wamid } = await h.openChat();
    const res = await post(t, { messaging_product: 'whatsapp', status: 'read', message_id: wamid });
    expect(res).toMatchObject({ status: 200, body: { success: true } });
    expect(h.sandbox.state.reads.map((r) => r.messageId)).toContain(wamid);
  });
});

describe('the size bound of a message (issue 23, item 1)', () => {
  const oversized = (to: string) => ({
    messaging_product: 'whatsapp', to, type: 'location',
    location: { latitude: 19.4, longitude: -99.1, name: 'Tienda', padding: 'x'.repeat(300_000) },
  });

  it('POST /messages/v1 answers 413 payload_too_large and nothing goes upstream or is stored', async () => {
    const { t, to } = await h.openChat();
    const res = await h.send(t.apiKey, oversized(to));
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ error: 'payload_too_large', limit_bytes: 65536 });
    expect(await h.sent(to)).toEqual([]);
    expect(h.events(t.businessId).filter((e) => e.event.startsWith('message.') && e.event !== 'message.received')).toEqual([]);
  });

  it('the compatible route answers a Graph 400 and sends nothing', async () => {
    const { t, to } = await h.openChat();
    const res = await post(t, oversized(to));
    expect(res.status).toBe(400);
    expect(res.body).toEqual(graphError(100));
    expect(await h.sent(to)).toEqual([]);
  });

  it('an interactive or contacts message with an oversized extra member is refused the same way', async () => {
    const { t, to } = await h.openChat();
    const big = 'x'.repeat(70_000);
    const interactive = await h.send(t.apiKey, { messaging_product: 'whatsapp', to, type: 'interactive', interactive: { type: 'catalog_message', body: { text: 'hi' }, action: { name: 'catalog_message', extra: big } } });
    const contacts = await h.send(t.apiKey, { messaging_product: 'whatsapp', to, type: 'contacts', contacts: [{ name: { formatted_name: 'Ana' }, note: big }] });
    expect([interactive.status, contacts.status]).toEqual([413, 413]);
    expect(await h.sent(to)).toEqual([]);
  });
});

describe('an upstream that does not answer within the request', () => {
  it("answers Graph's temporary error (503, code 2) in time when the function's time-out is shorter than every attempt together", async () => {
    // Prepare: the upstream does not answer two attempts of 3 s each; the function has 5 s
    const t = await h.newTenant();
    const { getBusiness } = await import('#shared/business/repository.ts');
    const wabaId = (await getBusiness(t.businessId))!.wabaId!;
    await h.sandboxCall('POST', '/__sandbox/faults', { kind: 'hang', count: 2, target: 'templates' });

    // Act
    let res;
    try {
      res = await h.invoke('GET /{version}/{id}/message_templates', { apiKey: t.apiKey, params: { version: 'v23.0', id: wabaId }, timeoutMs: 5_000 });
    } finally {
      h.sandbox.state.faults = [];
    }

    // Assess: the upstream's failure, not the function's time-out (504 timeout)
    expect(res.status).toBe(503);
    expect(res.body.error).toMatchObject({ code: 2, type: 'OAuthException' });
  }, 20_000);
});
