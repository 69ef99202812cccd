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
const graphError = (code: number) => ({
  error: { message: expect.stringMatching(new RegExp(`^\\(#${code}\\) `)), type: expect.any(String), code, error_data: { messaging_product: 'whatsapp', details: expect.any(String) }, fbtrace_id: expect.any(String) },
});

const post = (t: { apiKey?: string; phoneNumberId: string }, body: unknown, extra: { version?: string; phoneNumberId?: string; headers?: Record<string, string> } = {}) =>
  h.invoke(ROUTE, { ...(t.apiKey ? { apiKey: t.apiKey } : {}), body, headers: extra.headers ?? {}, params: { version: extra.version ?? 'v23.0', id: extra.phoneNumberId ?? t.phoneNumberId } });
const text = (to: string, body = 'hola') => ({ messaging_product: 'whatsapp', recipient_type: 'individual', to: to.slice(1), type: 'text', text: { body } });

describe('POST /{version}/{id}/messages', () => {
  it("answers another business's phone number id with Meta's 404 and sends nothing", async () => {
    const { t, to } = await h.openChat();
    const other = await h.newTenant();

    const res = await post(t, text(to), { phoneNumberId: other.phoneNumberId });

    expect(res.status).toBe(404);
    expect(res.body).toEqual(graphError(100));
    expect(res.body.error.type).toBe('GraphMethodException');
    expect(await h.sent(to)).toEqual([]);
  });

  it("answers a media id longer than any Graph id with Meta's 404 (code 100), on GET and DELETE", async () => {
    const { t } = await h.openChat();
    const id = 'a'.repeat(2100);

    const got = await h.invoke('GET /{version}/{id}', { apiKey: t.apiKey, params: { version: 'v23.0', id } });
    const deleted = await h.invoke('DELETE /{version}/{id}', { apiKey: t.apiKey, params: { version: 'v23.0', id } });

    expect([got.status, deleted.status]).toEqual([404, 404]);
    expect(got.body).toEqual(graphError(100));
    expect(deleted.body).toEqual(graphError(100));
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
