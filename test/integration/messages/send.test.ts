/**
 * The send path against DynamoDB Local and the upstream sandbox: every message type, the 24-hour window,
 * every upstream code of the contract, transient faults, conversations, AI control and idempotency.
 */
import { signatureOf } from '#shared/upstream/signature.ts';
import { TEST_UPSTREAM } from '../../support/upstream-secret.ts';
import { startHarness, randomPhone, type Harness } from './harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h?.stop());

/** A tenant and a recipient who wrote in (open 24-hour window). */

const getMessage = async (apiKey: string, id: string) => (await h.invoke('GET /messages/v1/{id}', { apiKey, params: { id } })).body.message;

describe('POST /messages/v1: successful sends', () => {
  it('sends a service-style text inside the 24-hour window and returns every field of the Send result', async () => {
    // Prepare
    const { t, to } = await h.openChat();

    // Act
    const res = await h.send(t.apiKey, { to, content: 'Hola, ¿cómo estás?' });

    // Assess
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      messaging_product: 'whatsapp',
      contacts: [{ input: to, wa_id: to.slice(1) }],
      messages: [{ id: res.body.data.id, wamid: expect.stringMatching(/^wamid\./) }],
      data: { id: expect.any(String), conversationId: expect.any(String), messageType: 'text', direction: 'outbound', status: 'sent', createdAt: expect.any(String) },
    });
    expect((await h.sent(to)).at(-1)).toMatchObject({ messaging_product: 'whatsapp', to, type: 'text', text: { body: 'Hola, ¿cómo estás?' } });
    const stored = await getMessage(t.apiKey, res.body.data.id);
    expect(stored).toMatchObject({ id: res.body.data.id, status: 'sent', direction: 'outbound', messageType: 'text', wamid: res.body.messages[0].wamid, sentBy: 'api', content: { body: 'Hola, ¿cómo estás?' } });
    const sentEvent = h.events(t.businessId).find((e) => e.event === 'message.sent');
    expect(sentEvent?.data).toMatchObject({ message_id: res.body.data.id, sent_by: 'api', conversation_id: res.body.data.conversationId });
  });

  it('sends an upstream-style text and keeps one conversation per recipient', async () => {
    const { t, to } = await h.openChat();
    const first = await h.send(t.apiKey, { messaging_product: 'whatsapp', to, type: 'text', text: { body: 'uno' } });
    const second = await h.send(t.apiKey, { to, content: 'dos' });
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body.data.conversationId).toBe(first.body.data.conversationId);
    expect(h.events(t.businessId).filter((e) => e.event === 'conversation.created')).toHaveLength(1);
  });

  it('takes an upstream-style member sent as null as one not sent (heyoo sends caption and filename as null); a null messaging_product is none', async () => {
    const { t, to } = await h.openChat();
    const image = await h.send(t.apiKey, { messaging_product: 'whatsapp', recipient_type: 'individual', to, type: 'image', image: { link: 'https://example.com/a.png', caption: null } });
    const forwardedImage = (await h.sent(to)).at(-1).image;
    const document = await h.send(t.apiKey, { messaging_product: 'whatsapp', to, type: 'document', document: { link: 'https://example.com/a.pdf', caption: null, filename: null } });
    const forwardedDocument = (await h.sent(to)).at(-1).document;
    // A null id beside a link is no id: the link goes (the media rules read the request without the null).
    const byLink = await h.send(t.apiKey, { messaging_product: 'whatsapp', to, type: 'image', image: { id: null, link: 'https://example.com/b.png' } });
    const forwardedByLink = (await h.sent(to)).at(-1).image;
    // A null messaging_product is none: a body without one is the service's style, where it must be "whatsapp".
    const noProduct = await h.send(t.apiKey, { messaging_product: null, to, type: 'text', text: { body: 'x' } });
    expect([image.status, document.status, byLink.status]).toEqual([200, 200, 200]);
    // A media object goes as the service prepared its file (by link or id), without the nulls.
    expect(forwardedImage).toEqual({ link: 'https://example.com/a.png' });
    expect(forwardedDocument).toEqual({ link: 'https://example.com/a.pdf' });
    expect(forwardedByLink).toEqual({ link: 'https://example.com/b.png' });
    expect([noProduct.status, noProduct.body.error]).toEqual([400, 'validation_error']);
    // The envelope's nulls are none and stay here: no service field upstream, and the message's own callback data.
    const enveloped = await h.send(t.apiKey, { messaging_product: 'whatsapp', to, type: 'text', text: { body: 'sobre', preview_url: null }, ai: null, templateName: null, context: null, biz_opaque_callback_data: null });
    const forwardedText = (await h.sent(to)).at(-1);
    expect(enveloped.status).toBe(200);
    expect(forwardedText).toEqual({ messaging_product: 'whatsapp', recipient_type: 'individual', to, type: 'text', text: { body: 'sobre', preview_url: null }, biz_opaque_callback_data: enveloped.body.data.id });
    // Contact cards given as a JSON string (whatsapp-api-js) with null members, as an array would be.
    const cards = await h.send(t.apiKey, { messaging_product: 'whatsapp', to, type: 'contacts', contacts: JSON.stringify([{ name: { formatted_name: 'A B', last_name: null }, birthday: null, phones: [{ phone: '+1555', type: null }] }]) });
    expect(cards.status).toBe(200);
  });

  it('sends to a number written with its trunk "(0)" without it, to the contact that has the number', async () => {
    const t = await h.newTenant();
    const contact = await h.invoke('POST /contacts/v1', { apiKey: t.apiKey, body: { phone_number: '+44 20 7946 3639' } });
    const sent = await h.send(t.apiKey, { to: '+44 (0)20 7946 3639', type: 'template', templateName: 'hello_world', language: 'en_US' });
    expect(sent.status).toBe(200);
    expect((await getMessage(t.apiKey, sent.body.data.id)).contactId).toBe(contact.body.contact.id);
    expect((await h.sent('+442079463639')).map((p) => p.to)).toEqual(['+442079463639']);
  });

  it('gives concurrent first sends to a new number one contact and one conversation', async () => {
    const t = await h.newTenant();
    const to = randomPhone();
    const results = await Promise.all([1, 2, 3].map(() => h.send(t.apiKey, { to, type: 'template', templateName: 'hello_world', language: 'en_US' })));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(new Set(results.map((r) => r.body.data.conversationId)).size).toBe(1);
    expect((await h.invoke('GET /conversations/v1', { apiKey: t.apiKey })).body.conversations).toHaveLength(1);
  });

  it.each([
    ['image by link with caption', { type: 'image', image: { link: 'https://example.com/a.jpg', caption: 'Mira' } }],
    ['location', { type: 'location', location: { latitude: 19.43, longitude: -99.13, name: 'Zócalo', address: 'CDMX' } }],
    ['interactive buttons', { type: 'interactive', interactive: { type: 'button', body: { text: '¿Sí o no?' }, action: { buttons: [{ type: 'reply', reply: { id: 'yes', title: 'Sí' } }, { type: 'reply', reply: { id: 'no', title: 'No' } }] } } }],
    ['interactive list', { type: 'interactive', interactive: { type: 'list', body: { text: 'Elige' }, action: { button: 'Ver', sections: [{ title: 'A', rows: [{ id: 'a1', title: 'Uno' }] }] } } }],
    ['interactive cta_url', { type: 'interactive', interactive: { type: 'cta_url', body: { text: 'Visita' }, action: { name: 'cta_url', parameters: { display_text: 'Abrir', url: 'https://example.com' } } } }],
    ['interactive flow', { type: 'interactive', interactive: { type: 'flow', body: { text: 'Flujo' }, action: { name: 'flow', parameters: { flow_message_version: '3', flow_cta: 'Empezar', flow_id: '123' } } } }],
    ['contacts', { type: 'contacts', contacts: [{ name: { formatted_name: 'Ana López', first_name: 'Ana' }, phones: [{ phone: '+5215511112222', type: 'CELL' }] }] }],
  ])('sends %s with the Cloud API payload shape', async (_label, body) => {
    const { t, to } = await h.openChat();
    const res = await h.send(t.apiKey, { to, ...body });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ messageType: body.type, status: 'sent' });
    const last = (await h.sent(to)).at(-1);
    expect(last.type).toBe(body.type);
    expect(last[body.type]).toMatchObject((body as Record<string, unknown>)[body.type] as object);
  });
});

describe('POST /messages/v1: upstream delivery failures', () => {
  it('stores a free-form send outside the 24-hour window as failed and answers 131047 with its remedy', async () => {
    // Prepare
    const t = await h.newTenant();
    const to = randomPhone();

    // Act
    const res = await h.send(t.apiKey, { to, content: 'hola' });

    // Assess
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'message_delivery_failed',
      message: expect.any(String),
      code: '131047',
      action_required: expect.any(String),
      instructions: expect.stringMatching(/template/i),
      data: expect.objectContaining({ id: expect.any(String), status: 'failed' }),
    });
    const stored = await getMessage(t.apiKey, res.body.data.id);
    expect(stored).toMatchObject({ status: 'failed', error: { code: '131047' }, wamid: null });
    expect(h.events(t.businessId).map((e) => e.event)).toContain('message.failed');
  });

  it('settles a refused send as failed when its conversation holds a later message (the touch read again, not a 500)', async () => {
    // Prepare: the customer's message, timed a minute ahead, is the conversation's latest; the upstream stand-in never
    // saw it, so it refuses the send (131047), and the failed send's touch of the conversation must not move it back.
    const t = await h.newTenant();
    const from = randomPhone().slice(1);
    const ahead = String(Math.floor(Date.now() / 1000) + 60);
    const raw = JSON.stringify({ object: 'whatsapp_business_account', entry: [{ id: 'waba', changes: [{ field: 'messages', value: {
      messaging_product: 'whatsapp', metadata: { phone_number_id: t.phoneNumberId }, contacts: [{ wa_id: from }],
      messages: [{ from, id: `wamid.ahead.${from}`, timestamp: ahead, type: 'text', text: { body: 'hola' } }] } }] }] });
    expect((await h.invoke('POST /webhooks/upstream', { rawBody: raw, headers: { 'x-hub-signature-256': signatureOf(raw, TEST_UPSTREAM.appSecret) } })).status).toBe(200);
    expect(await h.drain()).toBe(0);

    // Act
    const res = await h.send(t.apiKey, { to: `+${from}`, content: 'hola' });

    // Assess
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'message_delivery_failed', code: '131047', data: { status: 'failed' } });
    expect(await getMessage(t.apiKey, res.body.data.id)).toMatchObject({ status: 'failed' });
    const conversation = (await h.invoke('GET /conversations/v1/{id}', { apiKey: t.apiKey, params: { id: res.body.data.conversationId } })).body;
    expect(JSON.stringify(conversation)).toContain(new Date(Number(ahead) * 1000).toISOString());
  });

  it.each([
    ['location', { type: 'location', location: { latitude: 1, longitude: 1 } }],
    ['reaction', { type: 'reaction', reaction: { message_id: 'wamid.unknown', emoji: '👍' } }],
  ])('applies the window to %s messages too', async (_label, body) => {
    const t = await h.newTenant();
    const res = await h.send(t.apiKey, { to: randomPhone(), ...body });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('131047');
  });

  it.each([
    ['130472', 'invalid_recipient'],
    ['131026', 'user_blocked'],
    ['131042', 'message_delivery_failed'],
    ['131048', 'spam_rate_limit'],
  ])('maps recipient code %s to %s (templates too)', async (code, error) => {
    const t = await h.newTenant();
    const to = `+52155${code}`.padEnd(8, '0').slice(0, 6) + '00' + code;
    const res = await h.send(t.apiKey, { to, type: 'template', templateName: 'hello_world', language: 'en_US' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error, code, action_required: expect.any(String), instructions: expect.any(String), data: { status: 'failed' } });
  });

  it('answers an unknown template with 132000 template_not_found and its details', async () => {
    const t = await h.newTenant();
    const res = await h.send(t.apiKey, { to: randomPhone(), type: 'template', templateName: 'no_such_template' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'template_not_found', code: '132000', details: { template_name: 'no_such_template', language: 'es_MX' }, data: { status: 'failed' } });
  });

  it('answers a template in a language it does not have with 132000 (deterministic full form)', async () => {
    const t = await h.newTenant();
    const res = await h.send(t.apiKey, { to: randomPhone(), type: 'template', template: { name: 'hello_world', language: { code: 'es_MX', policy: 'deterministic' } } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: '132000', details: { template_name: 'hello_world', language: 'es_MX' } });
  });

  it.each([
    [131051, 'unsupported_media_type'],
    [131053, 'file_too_large'],
    [131052, 'media_download_failed'],
  ])('maps upstream code %i to %s and stores the message failed', async (code, error) => {
    const { t, to } = await h.openChat();
    await h.sandboxCall('POST', '/__sandbox/faults', { kind: 'error', code, target: 'messages' });
    const res = await h.send(t.apiKey, { to, content: 'con error' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error, code: String(code), action_required: expect.any(String), instructions: expect.any(String), data: { status: 'failed' } });
    expect((await getMessage(t.apiKey, res.body.data.id)).status).toBe('failed');
  });

  it('keeps an upstream code it does not know, with the upstream message', async () => {
    const { t, to } = await h.openChat();
    await h.sandboxCall('POST', '/__sandbox/faults', { kind: 'error', code: 135000, message: 'Generic user error', target: 'messages' });
    const res = await h.send(t.apiKey, { to, content: 'raro' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: '135000', message: expect.stringContaining('Generic user error'), data: { status: 'failed' } });
  });

});

describe('POST /messages/v1: transient upstream faults', () => {
  it.each([
    ['two 500s', { kind: 'error500', count: 2 }],
    ['throttling 130429', { kind: 'throttle', count: 1 }],
    ['a hanging call (timeout)', { kind: 'hang', count: 1 }],
  ])('retries %s with backoff and sends', async (_label, fault) => {
    const { t, to } = await h.openChat();
    await h.sandboxCall('POST', '/__sandbox/faults', { ...fault, target: 'messages' });
    const res = await h.send(t.apiKey, { to, content: 'persistente' });
    expect(res.status).toBe(200);
    expect((await h.sent(to)).filter((p) => p.text?.body === 'persistente')).toHaveLength(1);
  });

  it('reads a refusal answered with HTTP 200 and an error object by its code, not its HTTP status', async () => {
    const { t, to } = await h.openChat();
    await h.sandboxCall('POST', '/__sandbox/faults', { kind: 'error', code: 131026, status: 200, count: 1, target: 'messages' });
    const res = await h.send(t.apiKey, { to, content: 'hola' });
    expect([res.status, res.body.error, res.body.code]).toEqual([400, 'user_blocked', '131026']);
  });

  it.each([[130429], [131056], [80007], [4]])('reports a number still throttled (%i) after its attempts as 429 upstream_throttled, with Retry-After', async (code) => {
    // Prepare: Meta's throttling codes come with HTTP 400
    const { t, to } = await h.openChat();
    await h.sandboxCall('POST', '/__sandbox/faults', { kind: 'error', code, status: 400, count: 3, target: 'messages' });

    // Act
    const res = await h.send(t.apiKey, { to, content: 'otra vez' });

    // Assess
    expect(res.status).toBe(429);
    expect(res.body).toMatchObject({ error: 'upstream_throttled', code: String(code), retry_after: 30, data: { status: 'failed' } });
    expect(res.headers['retry-after']).toBe('30');
  });

  it.each([
    ['502 upstream_unavailable', { kind: 'error500', count: 3 }, 502, '5'],
    ['429 upstream_throttled', { kind: 'error', code: 130429, status: 400, count: 3 }, 429, '30'],
    ['400 message_delivery_failed', { kind: 'error', code: 131047, status: 400, count: 1 }, 400, undefined],
  ])('answers a repeat under the same Idempotency-Key with the first answer (%s), status, body and Retry-After', async (_label, fault, status, retryAfter) => {
    // Prepare
    const { t, to } = await h.openChat();
    await h.sandboxCall('POST', '/__sandbox/faults', { ...fault, target: 'messages' });
    const headers = { 'idempotency-key': `k-${to}` };
    const first = await h.send(t.apiKey, { to, content: 'una vez' }, headers);

    // Act
    const repeat = await h.send(t.apiKey, { to, content: 'una vez' }, headers);

    // Assess
    // (A refusal's Retry-After is the rate limit window's, as on every response.)
    const retryAfterOf = (res: { headers: Record<string, string> }) => (retryAfter ? res.headers['retry-after'] : undefined);
    expect([first.status, retryAfterOf(first)]).toEqual([status, retryAfter]);
    expect([repeat.status, retryAfterOf(repeat), repeat.headers['idempotent-replayed']]).toEqual([status, retryAfter, 'true']);
    expect(repeat.body).toEqual(first.body);
    expect(await h.sent(to)).toEqual([]);
  });

  it('declares the message failed after the last attempt, and retry sends it once the upstream is back', async () => {
    const { t, to } = await h.openChat();
    await h.sandboxCall('POST', '/__sandbox/faults', { kind: 'error500', count: 3, target: 'messages' });
    const res = await h.send(t.apiKey, { to, content: 'caído' });
    expect(res.status).toBe(502);
    expect(res.body).toMatchObject({ error: 'upstream_unavailable', retry_after: 5, data: { status: 'failed' } });
    expect(res.headers['retry-after']).toBe('5');
    const retryPath = `POST /messages/v1/${res.body.data.id}/retry`;
    expect(res.body.instructions).toContain(retryPath);

    // Still down: the retry's failure names the same message to retry.
    await h.sandboxCall('POST', '/__sandbox/faults', { kind: 'error500', count: 3, target: 'messages' });
    const stillDown = await h.invoke('POST /messages/v1/{id}/retry', { apiKey: t.apiKey, params: { id: res.body.data.id } });
    expect(stillDown.status).toBe(400);
    expect(stillDown.body).toMatchObject({ error: 'retry_failed', action_required: 'retry_later', data: { id: res.body.data.id } });
    expect(stillDown.body.instructions).toContain(retryPath);

    const retry = await h.invoke('POST /messages/v1/{id}/retry', { apiKey: t.apiKey, params: { id: res.body.data.id } });
    expect(retry.status).toBe(200);
    expect(retry.body).toEqual({ message: expect.any(String), data: { id: res.body.data.id, messageId: expect.stringMatching(/^wamid\./), status: 'sent', retriedAt: expect.any(String) } });
  });
});

describe('POST /messages/v1/{id}/retry', () => {
  it('leaves a conversation closed since the message failed as it was: the retry does not lift it above the open one', async () => {
    // Prepare: a free-form send refused (window closed), its conversation closed, then the customer writes (a new one)
    const t = await h.newTenant();
    const to = randomPhone();
    const failed = await h.send(t.apiKey, { to, content: 'tarde' });
    expect(failed.status).toBe(400);
    const closedId = failed.body.data.conversationId;
    expect((await h.invoke('POST /conversations/v1/{id}/close', { apiKey: t.apiKey, params: { id: closedId } })).status).toBe(200);
    const before = (await h.invoke('GET /conversations/v1/{id}', { apiKey: t.apiKey, params: { id: closedId } })).body.conversation;
    await h.inbound(t.phoneNumberId, to);
    await h.drain();

    // Act
    const retry = await h.invoke('POST /messages/v1/{id}/retry', { apiKey: t.apiKey, params: { id: failed.body.data.id } });

    // Assess
    expect(retry.status).toBe(200);
    const closed = (await h.invoke('GET /conversations/v1/{id}', { apiKey: t.apiKey, params: { id: closedId } })).body.conversation;
    expect(closed).toMatchObject({ status: 'closed', lastMessageAt: before.lastMessageAt });
    const listed = (await h.invoke('GET /conversations/v1', { apiKey: t.apiKey })).body.conversations.map((c: any) => [c.status, c.id === closedId]);
    expect(listed).toEqual([['open', false], ['closed', true]]);
  });

  it('keeps failing with retry_failed while the window is closed, sends once it opens, then refuses with invalid_state', async () => {
    // Prepare: a failed free-form message and its stored content.
    const t = await h.newTenant();
    const to = randomPhone();
    const failed = await h.send(t.apiKey, { to, type: 'image', image: { link: 'https://example.com/a.jpg', caption: 'Hola' } });
    expect(failed.status).toBe(400);
    const id = failed.body.data.id;

    // Act + Assess: the cause still holds.
    const still = await h.invoke('POST /messages/v1/{id}/retry', { apiKey: t.apiKey, params: { id } });
    expect(still.status).toBe(400);
    expect(still.body).toMatchObject({ error: 'retry_failed', code: '131047', action_required: expect.any(String) });
    expect((await getMessage(t.apiKey, id)).status).toBe('failed');

    // The customer writes: the window opens and the retry goes through with the stored content.
    await h.inbound(t.phoneNumberId, to);
    await h.drain();
    const ok = await h.invoke('POST /messages/v1/{id}/retry', { apiKey: t.apiKey, params: { id } });
    expect(ok.status).toBe(200);
    expect(ok.body.data).toMatchObject({ id, status: 'sent', messageId: expect.stringMatching(/^wamid\./), retriedAt: expect.any(String) });
    expect((await h.sent(to)).at(-1)).toMatchObject({ type: 'image', image: { link: 'https://example.com/a.jpg', caption: 'Hola' } });
    expect(await getMessage(t.apiKey, id)).toMatchObject({ status: 'sent', wamid: ok.body.data.messageId, retriedAt: ok.body.data.retriedAt });

    const again = await h.invoke('POST /messages/v1/{id}/retry', { apiKey: t.apiKey, params: { id } });
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ error: 'invalid_state', message: expect.any(String) });
  });

  it('answers 404 not_found for a failed message whose contact was deleted since, and sends nothing', async () => {
    // Prepare: a failed message, then its contact deleted and the customer writing in again (a new contact)
    const t = await h.newTenant();
    const to = randomPhone();
    const failed = await h.send(t.apiKey, { to, content: 'late' });
    expect(failed.status).toBe(400);
    const id = failed.body.data.id;
    const contactId = (await getMessage(t.apiKey, id)).contactId;
    expect((await h.invoke('DELETE /contacts/v1/{id}', { apiKey: t.apiKey, params: { id: contactId } })).status).toBe(200);
    await h.inbound(t.phoneNumberId, to);
    await h.drain();
    const sentBefore = (await h.sent(to)).length;

    // Act
    const res = await h.invoke('POST /messages/v1/{id}/retry', { apiKey: t.apiKey, params: { id } });

    // Assess
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'not_found', message: expect.stringContaining('was deleted') });
    expect(await h.sent(to)).toHaveLength(sentBefore);
    expect((await getMessage(t.apiKey, id)).status).toBe('failed');
  });

  it('answers 404 for an unknown id and a non-UUID, 403 for another business\'s message', async () => {
    const t = await h.newTenant();
    const other = await h.newTenant();
    const theirs = await h.send(other.apiKey, { to: randomPhone(), content: 'x' });
    for (const id of ['00000000-0000-4000-8000-000000000000', 'abc']) {
      const res = await h.invoke('POST /messages/v1/{id}/retry', { apiKey: t.apiKey, params: { id } });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'not_found', message: expect.any(String) });
    }
    const foreign = await h.invoke('POST /messages/v1/{id}/retry', { apiKey: t.apiKey, params: { id: theirs.body.data.id } });
    expect(foreign.status).toBe(403);
    expect(foreign.body).toEqual({ error: 'forbidden', message: expect.any(String) });
  });

  it('refuses an inbound message with invalid_state (it exists and is not failed)', async () => {
    // Prepare
    const t = await h.newTenant();
    const from = randomPhone();
    await h.inbound(t.phoneNumberId, from);
    await h.drain();
    const conversations = await h.invoke('GET /conversations/v1', { apiKey: t.apiKey });
    const messages = await h.invoke('GET /conversations/v1/{id}/messages', { apiKey: t.apiKey, params: { id: conversations.body.conversations[0].id } });
    const received = messages.body.messages.find((m: any) => m.direction === 'inbound');

    // Act
    const res = await h.invoke('POST /messages/v1/{id}/retry', { apiKey: t.apiKey, params: { id: received.id } });

    // Assess
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'invalid_state', message: expect.any(String) });
  });
});

describe('POST /messages/v1: templates', () => {
  it('sends the shortcut with body parameters in es_MX by default', async () => {
    const t = await h.newTenant();
    const to = randomPhone();
    const res = await h.send(t.apiKey, { to, type: 'template', templateName: 'order_update', template_parameters: ['Ana', 'A-1001'] });
    expect(res.status).toBe(200);
    expect(res.body.data.messageType).toBe('template');
    expect((await h.sent(to)).at(-1)).toMatchObject({
      type: 'template',
      template: { name: 'order_update', language: { code: 'es_MX' }, components: [{ type: 'body', parameters: [{ type: 'text', text: 'Ana' }, { type: 'text', text: 'A-1001' }] }] },
    });
  });

  it('keeps the shortcut default es_MX even when the template exists only in another language (hello_world is en_US): 132000', async () => {
    const t = await h.newTenant();
    const to = randomPhone();
    const res = await h.send(t.apiKey, { to, type: 'template', templateName: 'hello_world' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'template_not_found', code: '132000', details: { template_name: 'hello_world', language: 'es_MX' }, data: { status: 'failed' } });
  });

  it.each([
    ['too few', ['Ana'], 2, 1],
    ['too many', ['Ana', 'A-1', 'extra'], 2, 3],
  ])('refuses %s body parameters with invalid_template_parameters before sending', async (_label, params, expected, received) => {
    const t = await h.newTenant();
    const to = randomPhone();
    const res = await h.send(t.apiKey, { to, type: 'template', templateName: 'order_update', template_parameters: params });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'invalid_template_parameters', message: expect.any(String), details: { expected, received } });
    expect(await h.sent(to)).toEqual([]);
  });

  it('sends the full form with currency and date_time parameters', async () => {
    const t = await h.newTenant();
    const to = randomPhone();
    const template = {
      name: 'order_update',
      language: { code: 'es_MX', policy: 'deterministic' },
      components: [{ type: 'body', parameters: [{ type: 'currency', currency: { fallback_value: '$100.99', code: 'MXN', amount_1000: 100990 } }, { type: 'date_time', date_time: { fallback_value: 'mañana' } }] }],
    };
    const res = await h.send(t.apiKey, { messaging_product: 'whatsapp', to, type: 'template', template });
    expect(res.status).toBe(200);
    expect((await h.sent(to)).at(-1).template).toMatchObject(template);
  });

  it('resolves quick-reply payloads: configured buttonId, then btn_{index}_{name}; the request payload only with allowButtonIdOverride', async () => {
    const t = await h.newTenant();
    const to = randomPhone();
    const withPayload = { name: 'reminder_buttons', language: { code: 'es_MX' }, components: [{ type: 'body', parameters: [{ type: 'text', text: 'Ana' }] }, { type: 'button', sub_type: 'quick_reply', index: '0', parameters: [{ type: 'payload', payload: 'MINE' }] }] };
    const payloads = async () => (await h.sent(to)).at(-1).template.components.filter((c: any) => c.type === 'button').map((c: any) => [c.index, c.parameters[0].payload]);

    expect((await h.send(t.apiKey, { to, type: 'template', templateName: 'reminder_buttons', template_parameters: ['Ana'] })).status).toBe(200);
    expect(await payloads()).toEqual([['0', 'confirm_appointment'], ['1', 'btn_1_reminder_buttons']]);

    expect((await h.send(t.apiKey, { to, type: 'template', template: withPayload })).status).toBe(200);
    expect(await payloads()).toEqual([['0', 'confirm_appointment'], ['1', 'btn_1_reminder_buttons']]);

    expect((await h.send(t.apiKey, { to, type: 'template', template: withPayload, allowButtonIdOverride: true })).status).toBe(200);
    expect(await payloads()).toEqual([['0', 'MINE'], ['1', 'btn_1_reminder_buttons']]);

    // Meta takes sub_type in capitals and a numeric index too: the same button, once, as sent, with the same
    // resolution; the template's other quick-reply button follows it.
    const capitals = { ...withPayload, components: [withPayload.components[0], { ...withPayload.components[1], sub_type: 'QUICK_REPLY', index: 1 }] };
    expect((await h.send(t.apiKey, { to, type: 'template', template: capitals })).status).toBe(200);
    expect(await payloads()).toEqual([[1, 'btn_1_reminder_buttons'], ['0', 'confirm_appointment']]);
    expect((await h.sent(to)).at(-1).template.components[1]).toEqual({ type: 'button', sub_type: 'QUICK_REPLY', index: 1, parameters: [{ type: 'payload', payload: 'btn_1_reminder_buttons' }] });

    // A button of another kind at an index keeps it: no quick reply is added at the same index.
    const copyCode = { ...withPayload, components: [withPayload.components[0], { type: 'button', sub_type: 'copy_code', index: '0', parameters: [{ type: 'coupon_code', coupon_code: 'SAVE10' }] }] };
    expect((await h.send(t.apiKey, { to, type: 'template', template: copyCode })).status).toBe(200);
    expect(await payloads()).toEqual([['0', undefined], ['1', 'btn_1_reminder_buttons']]);
  });

  it('takes a recipient given as a JSON number on the Cloud API path, and echoes it as its digits', async () => {
    const { t, to } = await h.openChat();
    const digits = to.slice(1);

    const res = await h.invoke('POST /{version}/{id}/messages', { apiKey: t.apiKey, params: { version: 'v23.0', id: t.phoneNumberId }, body: { messaging_product: 'whatsapp', to: Number(digits), type: 'text', text: { body: 'hola' } } });

    expect(res.status).toBe(200);
    expect(res.body.contacts).toEqual([{ input: digits, wa_id: digits }]);
    expect((await h.sent(to)).at(-1).text).toEqual({ body: 'hola' });
  });

  it('forwards a template without components without any, and an empty list as sent', async () => {
    const { t, to } = await h.openChat();
    const last = async () => (await h.sent(to)).at(-1).template;

    expect((await h.send(t.apiKey, { to, type: 'template', template: { name: 'hello_world', language: { code: 'en_US' } } })).status).toBe(200);
    expect(await last()).toEqual({ name: 'hello_world', language: { code: 'en_US' } });
    expect((await h.send(t.apiKey, { to, type: 'template', templateName: 'hello_world', language: 'en_US' })).status).toBe(200);
    expect(await last()).toEqual({ name: 'hello_world', language: { code: 'en_US' } });
    expect((await h.send(t.apiKey, { to, type: 'template', template: { name: 'hello_world', language: { code: 'en_US' }, components: [] } })).status).toBe(200);
    expect(await last()).toEqual({ name: 'hello_world', language: { code: 'en_US' }, components: [] });
  });

  it("takes component kinds in upper case as pywa builds them (HEADER, BODY, LIMITED_TIME_OFFER) and a GIF header, forwards them as sent, and counts an upper-case BODY's parameters", async () => {
    const { t, to } = await h.openChat();
    const last = async () => (await h.sent(to)).at(-1).template;
    const image = h.sandbox.state.addMedia(t.phoneNumberId, Buffer.from('jpeg'), 'image/jpeg');
    const promo = { name: 'promo_header', language: { code: 'es_MX' }, components: [
      { type: 'HEADER', parameters: [{ type: 'image', image: { id: image.id } }] },
      { type: 'BODY', parameters: [{ type: 'text', text: 'John' }] },
      { type: 'LIMITED_TIME_OFFER', parameters: [{ type: 'limited_time_offer', limited_time_offer: { expiration_time_ms: 1_900_000_000_000 } }] },
    ] };

    const sent = await h.send(t.apiKey, { to, type: 'template', template: promo });
    const forwarded = await last();
    const tooMany = await h.send(t.apiKey, { to, type: 'template', template: { name: 'order_update', language: { code: 'es_MX' }, components: [{ type: 'BODY', parameters: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }, { type: 'text', text: 'c' }] }] } });
    const gif = await h.send(t.apiKey, { to, type: 'template', template: { name: 'hello_world', language: { code: 'en_US' }, components: [{ type: 'header', parameters: [{ type: 'gif', gif: { link: 'https://example.com/promo.mp4' } }] }] } });

    expect(sent.status).toBe(200);
    expect(forwarded).toEqual(promo);
    expect(tooMany.status).toBe(400);
    expect(tooMany.body).toMatchObject({ error: 'invalid_template_parameters', details: { expected: 2, received: 3 } });
    expect(gif.status).toBe(200);
    expect((await last()).components[0].parameters[0]).toEqual({ type: 'gif', gif: { link: 'https://example.com/promo.mp4' } });
  });

  it('forwards an audio\'s voice-message flag (Meta\'s `voice`), and refuses one that is not a boolean', async () => {
    const { t, to } = await h.openChat();
    const { id } = h.sandbox.state.addMedia(t.phoneNumberId, Buffer.alloc(64, 2), 'audio/mpeg');

    const res = await h.send(t.apiKey, { to, type: 'audio', audio: { id, voice: true } });
    const bad = await h.send(t.apiKey, { to, type: 'audio', audio: { id, voice: 'yes' } });

    expect(res.status).toBe(200);
    expect((await h.sent(to)).at(-1).audio).toEqual({ id, voice: true });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.details)).toContain('audio.voice');
  });

  it('sends header_media by url, normalises a media id put in url, and refuses a media id of another number', async () => {
    const t = await h.newTenant();
    const to = randomPhone();
    const mine = h.sandbox.state.addMedia(t.phoneNumberId, Buffer.from('jpeg'), 'image/jpeg');
    const theirs = h.sandbox.state.addMedia('100000000000999', Buffer.from('jpeg'), 'image/jpeg');
    const base = { to, type: 'template', templateName: 'promo_header', template_parameters: ['Ana'] };
    const header = async () => (await h.sent(to)).at(-1).template.components.find((c: any) => c.type === 'header').parameters[0];

    const missing = await h.send(t.apiKey, base);
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ error: 'invalid_template_parameters', message: 'Template promo_header needs an image header: give header_media or a header component' });

    expect((await h.send(t.apiKey, { ...base, header_media: { type: 'image', url: 'https://example.com/promo.jpg' } })).status).toBe(200);
    expect(await header()).toEqual({ type: 'image', image: { link: 'https://example.com/promo.jpg' } });

    expect((await h.send(t.apiKey, { ...base, header_media: { type: 'image', url: mine.id } })).status).toBe(200);
    expect(await header()).toEqual({ type: 'image', image: { id: mine.id } });

    const denied = await h.send(t.apiKey, { ...base, header_media: { type: 'image', media_id: theirs.id } });
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ error: 'forbidden', code: 'MEDIA_PERMISSION_DENIED', message: expect.any(String), hint: expect.any(String) });
  });

  it('checks a header media id against this service\'s own upload record: expired → 400 media_expired, another number\'s → 403', async () => {
    // Prepare: both ids are readable upstream by the sending number; only the service's records tell what is wrong.
    const t = await h.newTenant();
    const to = randomPhone();
    const { putMedia } = await import('#shared/media/repository.ts');
    const record = (mediaId: string, phoneNumberId: string, expiresAt: string) => putMedia({
      businessId: t.businessId, mediaId, phoneNumberId, type: 'image', mimeType: 'image/jpeg', fileSize: 4, s3Key: `k/${mediaId}`, createdAt: new Date().toISOString(), expiresAt,
    });
    const expired = h.sandbox.state.addMedia(t.phoneNumberId, Buffer.from('jpeg'), 'image/jpeg');
    const otherNumber = h.sandbox.state.addMedia(t.phoneNumberId, Buffer.from('jpeg'), 'image/jpeg');
    await record(expired.id, t.phoneNumberId, new Date(Date.now() - 1000).toISOString());
    await record(otherNumber.id, '100000000000998', new Date(Date.now() + 86_400_000).toISOString());
    const base = { to, type: 'template', templateName: 'promo_header', template_parameters: ['Ana'] };
    const full = (mediaId: string) => ({ to, type: 'template', template: { name: 'promo_header', language: { code: 'es_MX' }, components: [
      { type: 'header', parameters: [{ type: 'image', image: { id: mediaId } }] }, { type: 'body', parameters: [{ type: 'text', text: 'Ana' }] },
    ] } });

    // Act
    const answers = [
      await h.send(t.apiKey, { ...base, header_media: { type: 'image', media_id: expired.id } }),
      await h.send(t.apiKey, full(expired.id)),
      await h.send(t.apiKey, { ...base, header_media: { type: 'image', url: otherNumber.id } }),
      await h.send(t.apiKey, full(otherNumber.id)),
    ];

    // Assess
    expect(answers.map((r) => [r.status, r.body.error])).toEqual([
      [400, 'media_expired'], [400, 'media_expired'], [403, 'forbidden'], [403, 'forbidden'],
    ]);
    expect(await h.sent(to)).toEqual([]);
  });

  it.each([[10, 403], [190, 401]])('answers MEDIA_PERMISSION_DENIED when the upstream refuses to show the number a media id (%i), in a media message and a template header', async (code, status) => {
    // Prepare: an id only the upstream holds, and the upstream refusing its look-up
    const { t, to } = await h.openChat();
    const own = h.sandbox.state.addMedia(t.phoneNumberId, Buffer.from('jpeg'), 'image/jpeg');
    const refuse = () => h.sandboxCall('POST', '/__sandbox/faults', { kind: 'error', code, status, target: 'media' });

    // Act
    await refuse();
    const image = await h.send(t.apiKey, { to, type: 'image', image: { id: own.id } });
    await refuse();
    const header = await h.send(t.apiKey, { to, type: 'template', templateName: 'promo_header', template_parameters: ['Ana'], header_media: { type: 'image', media_id: own.id } });

    // Assess
    for (const res of [image, header]) {
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 'forbidden', code: 'MEDIA_PERMISSION_DENIED', message: expect.any(String), hint: expect.any(String) });
    }
    expect(await h.sent(to)).toEqual([]);
  });

  it("refuses a media message by another number's media id (403 MEDIA_PERMISSION_DENIED) before anything goes out; the number's own upstream id is sent", async () => {
    // Prepare: neither id is this service's upload; only the upstream knows whose each is.
    const { t, to } = await h.openChat();
    const theirs = h.sandbox.state.addMedia('100000000000999', Buffer.from('jpeg'), 'image/jpeg');
    const own = h.sandbox.state.addMedia(t.phoneNumberId, Buffer.from('jpeg'), 'image/jpeg');

    // Act
    const denied = await h.send(t.apiKey, { to, type: 'image', image: { id: theirs.id } });
    const sent = await h.send(t.apiKey, { to, type: 'image', image: { id: own.id } });

    // Assess
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ error: 'forbidden', code: 'MEDIA_PERMISSION_DENIED', message: expect.any(String), hint: expect.any(String) });
    expect(sent.status).toBe(200);
    expect((await h.sent(to)).filter((p) => p.type === 'image').map((p) => p.image.id)).toEqual([own.id]);
  });

  it("refuses another number's media id wherever a message names one (an interactive header, a template's carousel card: 403 MEDIA_PERMISSION_DENIED) and a metadata link there (400)", async () => {
    // Prepare
    const { t, to } = await h.openChat();
    const theirs = h.sandbox.state.addMedia('100000000000999', Buffer.from('jpeg'), 'image/jpeg');
    const own = h.sandbox.state.addMedia(t.phoneNumberId, Buffer.from('jpeg'), 'image/jpeg');
    const buttons = (header: Record<string, unknown>) => ({
      to, type: 'interactive', interactive: { type: 'button', header, body: { text: 'b' }, action: { buttons: [{ type: 'reply', reply: { id: '1', title: 't' } }] } },
    });
    const carousel = (image: Record<string, unknown>) => ({
      to, type: 'template', template: { name: 'hello_world', language: { code: 'en_US' }, components: [
        { type: 'carousel', cards: [{ card_index: 0, components: [{ type: 'header', parameters: [{ type: 'image', image }] }] }] },
      ] },
    });

    // Act
    const answers = [
      await h.send(t.apiKey, buttons({ type: 'image', image: { id: theirs.id } })),
      await h.send(t.apiKey, { ...buttons({ type: 'document', document: { id: theirs.id } }), messaging_product: 'whatsapp', to: to.slice(1) }),
      await h.send(t.apiKey, carousel({ id: theirs.id })),
      await h.send(t.apiKey, buttons({ type: 'image', image: { link: 'http://169.254.169.254/latest/x.jpg' } })),
    ];
    const sent = await h.send(t.apiKey, buttons({ type: 'image', image: { id: own.id } }));

    // Assess
    expect(answers.map((r) => [r.status, r.body.code ?? r.body.error])).toEqual([
      [403, 'MEDIA_PERMISSION_DENIED'], [403, 'MEDIA_PERMISSION_DENIED'], [403, 'MEDIA_PERMISSION_DENIED'], [400, 'invalid_media_link'],
    ]);
    expect(sent.status).toBe(200);
    expect((await h.sent(to)).filter((p) => p.type === 'interactive').map((p) => p.interactive.header.image.id)).toEqual([own.id]);
  });

  it('refuses a media file to a new number before a contact or conversation exists: another number\'s id (403), an upload of another kind (400)', async () => {
    // Prepare: a number nobody has written to yet; an image the service uploaded for this number, sent as a sticker
    const t = await h.newTenant();
    const to = randomPhone();
    const theirs = h.sandbox.state.addMedia('100000000000999', Buffer.from('jpeg'), 'image/jpeg');
    const image = h.sandbox.state.addMedia(t.phoneNumberId, Buffer.from('jpeg'), 'image/jpeg');
    const { putMedia } = await import('#shared/media/repository.ts');
    await putMedia({ businessId: t.businessId, mediaId: image.id, phoneNumberId: t.phoneNumberId, type: 'image', mimeType: 'image/jpeg', fileSize: 4, s3Key: `k/${image.id}`, createdAt: new Date().toISOString(), expiresAt: new Date(Date.now() + 86_400_000).toISOString() });
    h.events(t.businessId);

    // Act
    const denied = await h.send(t.apiKey, { to, type: 'image', image: { id: theirs.id } });
    const upstreamStyle = await h.send(t.apiKey, { messaging_product: 'whatsapp', to: to.slice(1), type: 'image', image: { id: theirs.id } });
    const wrongKind = await h.send(t.apiKey, { to, type: 'sticker', sticker: { id: image.id } });
    const contacts = await h.invoke('GET /contacts/v1', { apiKey: t.apiKey, query: { search: to.slice(1) } });
    const conversations = await h.invoke('GET /conversations/v1', { apiKey: t.apiKey });

    // Assess: refused, with nothing recorded and no event
    expect([denied.status, upstreamStyle.status, wrongKind.status]).toEqual([403, 403, 400]);
    expect(contacts.body.contacts).toEqual([]);
    expect(conversations.body.conversations).toEqual([]);
    expect(h.events(t.businessId)).toEqual([]);
    expect(await h.sent(to)).toEqual([]);
  });

  it("refuses a header media id of another kind than the header's (an audio as an image header), in the shortcut and the full form", async () => {
    // Prepare: an OGG audio this service uploaded for the sending number
    const t = await h.newTenant();
    const to = randomPhone();
    const audio = h.sandbox.state.addMedia(t.phoneNumberId, Buffer.from('OggS'), 'audio/ogg');
    const { putMedia } = await import('#shared/media/repository.ts');
    await putMedia({ businessId: t.businessId, mediaId: audio.id, phoneNumberId: t.phoneNumberId, type: 'audio', mimeType: 'audio/ogg', fileSize: 4, s3Key: `k/${audio.id}`, createdAt: new Date().toISOString(), expiresAt: new Date(Date.now() + 86_400_000).toISOString() });

    // Act
    const shortcut = await h.send(t.apiKey, { to, type: 'template', templateName: 'promo_header', template_parameters: ['Ana'], header_media: { type: 'image', media_id: audio.id } });
    const full = await h.send(t.apiKey, { to, type: 'template', template: { name: 'promo_header', language: { code: 'es_MX' }, components: [
      { type: 'header', parameters: [{ type: 'image', image: { id: audio.id } }] }, { type: 'body', parameters: [{ type: 'text', text: 'Ana' }] },
    ] } });

    // Assess
    for (const res of [shortcut, full]) {
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error: 'unsupported_media_type', message: expect.stringContaining('audio/ogg') });
    }
    expect(await h.sent(to)).toEqual([]);
  });

  it('refuses header links to metadata, IPv4-compatible or non-http addresses with 400 invalid_media_link, in the shortcut and the full form, before anything goes upstream', async () => {
    const t = await h.newTenant();
    const to = randomPhone();
    // The full form's schema already refuses a link that is not http(s) (validation_error); addresses are for the template path.
    const links: [string, string][] = [
      ['http://169.254.169.254/latest/x.jpg', 'invalid_media_link'], ['http://[::a9fe:a9fe]/x.jpg', 'invalid_media_link'],
      ['http://[::127.0.0.1]/x.jpg', 'invalid_media_link'], ['file:///etc/passwd', 'validation_error'], ['ftp://example.com/x.jpg', 'validation_error'],
    ];
    for (const [link, fullFormError] of links) {
      const shortcut = await h.send(t.apiKey, { to, type: 'template', templateName: 'promo_header', template_parameters: ['Ana'], header_media: { type: 'image', url: link } });
      const full = await h.send(t.apiKey, { to, type: 'template', template: { name: 'promo_header', language: { code: 'es_MX' }, components: [
        { type: 'header', parameters: [{ type: 'image', image: { link } }] }, { type: 'body', parameters: [{ type: 'text', text: 'Ana' }] },
      ] } });
      expect([link, shortcut.status, shortcut.body.error, full.status, full.body.error]).toEqual([link, 400, 'invalid_media_link', 400, fullFormError]);
    }
    expect(await h.sent(to)).toEqual([]);
  });

  it('refuses what the approved template does not have: a header on one without, a button at an index it has none at', async () => {
    const t = await h.newTenant();
    const to = randomPhone();
    const full = (name: string, components: Record<string, unknown>[]) => ({ to, type: 'template', template: { name, language: { code: 'es_MX' }, components } });
    const body2 = { type: 'body', parameters: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] };

    const answers = [
      await h.send(t.apiKey, { to, type: 'template', templateName: 'order_update', template_parameters: ['a', 'b'], header_media: { type: 'image', url: 'https://example.com/a.jpg' } }),
      await h.send(t.apiKey, full('order_update', [body2, { type: 'button', sub_type: 'quick_reply', index: '5', parameters: [{ type: 'payload', payload: 'P' }] }])),
      await h.send(t.apiKey, full('reminder_buttons', [{ type: 'body', parameters: [{ type: 'text', text: 'a' }] }, { type: 'button', sub_type: 'quick_reply', index: '5', parameters: [{ type: 'payload', payload: 'P' }] }])),
    ];

    expect(answers.map((r) => [r.status, r.body.error])).toEqual([[400, 'invalid_template_parameters'], [400, 'invalid_template_parameters'], [400, 'invalid_template_parameters']]);
    expect(answers[2].body.details).toMatchObject({ buttons: 2, index: '5' });
    expect(await h.sent(to)).toEqual([]);
  });

  it('refuses an empty shortcut parameter, as the full form refuses an empty text parameter', async () => {
    const t = await h.newTenant();
    const to = randomPhone();
    const empty = await h.send(t.apiKey, { to, type: 'template', templateName: 'order_update', template_parameters: ['Ana', ''] });
    const full = await h.send(t.apiKey, { to, type: 'template', template: { name: 'order_update', language: { code: 'es_MX' }, components: [{ type: 'body', parameters: [{ type: 'text', text: 'Ana' }, { type: 'text', text: '' }] }] } });
    expect([empty.status, empty.body.error, Object.keys(empty.body.details)]).toEqual([400, 'validation_error', ['template_parameters.1']]);
    expect([full.status, full.body.error]).toEqual([400, 'validation_error']);
    expect(await h.sent(to)).toEqual([]);
  });

  it('refuses promo_header without its image header', async () => {
    const t = await h.newTenant();
    const res = await h.send(t.apiKey, { to: randomPhone(), type: 'template', templateName: 'promo_header', template_parameters: ['Ana'] });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_template_parameters');
  });
});

describe('POST /messages/v1: reactions', () => {
  it('reacts to an inbound wamid and to a service id, replaces and removes with an empty emoji', async () => {
    const { t, to, wamid: inboundWamid } = await h.openChat();
    const mine = await h.send(t.apiKey, { to, content: 'hola' });

    expect((await h.send(t.apiKey, { to, type: 'reaction', reaction: { message_id: inboundWamid, emoji: '👍' } })).status).toBe(200);
    expect((await h.send(t.apiKey, { to, type: 'reaction', reaction: { message_id: mine.body.data.id, emoji: '❤️' } })).status).toBe(200);
    expect((await h.sent(to)).at(-1).reaction).toEqual({ message_id: mine.body.messages[0].wamid, emoji: '❤️' });
    expect((await getMessage(t.apiKey, mine.body.data.id)).reaction).toMatchObject({ emoji: '❤️' });

    expect((await h.send(t.apiKey, { to, type: 'reaction', reaction: { message_id: mine.body.messages[0].wamid, emoji: '🎉' } })).status).toBe(200);
    expect((await getMessage(t.apiKey, mine.body.data.id)).reaction).toMatchObject({ emoji: '🎉' });

    const removed = await h.send(t.apiKey, { to, type: 'reaction', reaction: { message_id: mine.body.data.id, emoji: '' } });
    expect(removed.status).toBe(200);
    expect(removed.body.data.messageType).toBe('reaction');
    expect((await h.sent(to)).at(-1).reaction).toEqual({ message_id: mine.body.messages[0].wamid, emoji: '' });
    expect((await getMessage(t.apiKey, mine.body.data.id)).reaction).toBeUndefined();
  });

  it("replaces the target's reaction when a failed reaction is retried and sent", async () => {
    // Prepare: 👍 sent; ❤️ refused by the upstream once
    const { t, to } = await h.openChat();
    const mine = await h.send(t.apiKey, { to, content: 'hola' });
    await h.send(t.apiKey, { to, type: 'reaction', reaction: { message_id: mine.body.data.id, emoji: '👍' } });
    await h.sandboxCall('POST', '/__sandbox/faults', { kind: 'error', code: 131026, status: 400, count: 1, target: 'messages' });
    const failed = await h.send(t.apiKey, { to, type: 'reaction', reaction: { message_id: mine.body.data.id, emoji: '❤️' } });
    expect([failed.status, (await getMessage(t.apiKey, mine.body.data.id)).reaction.emoji]).toEqual([400, '👍']);

    // Act
    const retried = await h.invoke('POST /messages/v1/{id}/retry', { apiKey: t.apiKey, params: { id: failed.body.data.id } });

    // Assess
    expect(retried.status).toBe(200);
    expect((await getMessage(t.apiKey, mine.body.data.id)).reaction).toMatchObject({ emoji: '❤️', messageId: failed.body.data.id });
  });

  it('refuses a target older than 30 days, in another chat, or unknown by service id', async () => {
    const t = await h.newTenant();
    const to = randomPhone();
    const old = await h.inbound(t.phoneNumberId, to, { timestamp: Math.floor(Date.now() / 1000) - 31 * 86400 });
    await h.inbound(t.phoneNumberId, to);
    const elsewhere = await h.inbound(t.phoneNumberId, randomPhone());
    await h.drain();
    for (const message_id of [old.wamid, elsewhere.wamid, '00000000-0000-4000-8000-000000000000']) {
      const res = await h.send(t.apiKey, { to, type: 'reaction', reaction: { message_id, emoji: '👍' } });
      expect(res.status).toBe(400);
      expect(Object.keys(res.body.details)).toEqual(['reaction.message_id']);
    }
  });
});

describe('POST /messages/v1: AI control and idempotency', () => {
  it('pauses the AI for pauseDuration minutes (default 5) and disables it with ai.disable', async () => {
    const { t, to } = await h.openChat();
    const paused = await h.send(t.apiKey, { to, content: 'yo sigo', ai: { pause: true, pauseDuration: 30 } });
    const conv = async () => (await h.invoke('GET /conversations/v1/{id}', { apiKey: t.apiKey, params: { id: paused.body.data.conversationId } })).body.conversation;
    const until = Date.parse((await conv()).aiPausedUntil);
    expect(until - Date.now()).toBeGreaterThan(29 * 60_000);
    expect(until - Date.now()).toBeLessThanOrEqual(30 * 60_000);

    await h.send(t.apiKey, { to, content: 'otra', ai: { pause: true } });
    expect(Date.parse((await conv()).aiPausedUntil) - Date.now()).toBeLessThanOrEqual(5 * 60_000);
    expect((await conv()).aiEnabled).toBe(true);

    await h.send(t.apiKey, { to, content: 'me quedo', ai: { disable: true } });
    expect((await conv()).aiEnabled).toBe(false);
  });

  it("applies a failed send's AI control when its retry sends it (pause, disable), and shows none of it in the message", async () => {
    // Prepare: two sends refused while the window is closed, each with its ai object
    const t = await h.newTenant();
    const to = randomPhone();
    const paused = await h.send(t.apiKey, { to, content: 'pausa', ai: { pause: true, pauseDuration: 30 } });
    const disabling = await h.send(t.apiKey, { to, content: 'apaga', ai: { disable: true } });
    expect([paused.status, disabling.status]).toEqual([400, 400]);
    await h.inbound(t.phoneNumberId, to);
    expect(await h.drain()).toBe(0);
    const conversation = async () => (await h.invoke('GET /conversations/v1/{id}', { apiKey: t.apiKey, params: { id: paused.body.data.conversationId } })).body.conversation;
    expect(await conversation()).toMatchObject({ aiPausedUntil: null, aiEnabled: true });

    // Act
    const retry = (id: string) => h.invoke('POST /messages/v1/{id}/retry', { apiKey: t.apiKey, params: { id } });
    const first = await retry(paused.body.data.id);
    const afterPause = await conversation();
    const second = await retry(disabling.body.data.id);

    // Assess
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(Date.parse(afterPause.aiPausedUntil) - Date.now()).toBeGreaterThan(29 * 60_000);
    expect((await conversation()).aiEnabled).toBe(false);
    const message = (await h.invoke('GET /messages/v1/{id}', { apiKey: t.apiKey, params: { id: paused.body.data.id } })).body.message;
    expect(message).not.toHaveProperty('ai');
  });

  it("pauses the AI for the business's handoff when a person's failed reply (no ai object) is retried and sent", async () => {
    // Prepare: a 20-minute handoff; a reply refused while the window is closed
    const t = await h.newTenant();
    const to = randomPhone();
    expect((await h.invoke('PATCH /agent/v1/settings', { apiKey: t.apiKey, body: { handoffPauseMinutes: 20 } })).status).toBe(200);
    const reply = await h.send(t.apiKey, { to, content: 'te atiendo yo' });
    expect(reply.status).toBe(400);
    await h.inbound(t.phoneNumberId, to);
    expect(await h.drain()).toBe(0);

    // Act
    const retried = await h.invoke('POST /messages/v1/{id}/retry', { apiKey: t.apiKey, params: { id: reply.body.data.id } });

    // Assess
    expect(retried.status).toBe(200);
    const conversation = (await h.invoke('GET /conversations/v1/{id}', { apiKey: t.apiKey, params: { id: reply.body.data.conversationId } })).body.conversation;
    expect(Date.parse(conversation.aiPausedUntil) - Date.now()).toBeGreaterThan(19 * 60_000);
  });

  it('returns the first response for a repeated Idempotency-Key without sending twice; another body gets 422', async () => {
    const { t, to } = await h.openChat();
    const headers = { 'Idempotency-Key': `k-${Date.now()}` };
    const first = await h.send(t.apiKey, { to, content: 'una vez' }, headers);
    const second = await h.send(t.apiKey, { to, content: 'una vez' }, headers);
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    // Marked as a failure's repeat is: the first answer has no mark, its repeat has.
    expect([first.headers['idempotent-replayed'], second.headers['idempotent-replayed']]).toEqual([undefined, 'true']);
    expect((await h.sent(to)).filter((p) => p.text?.body === 'una vez')).toHaveLength(1);
    const clash = await h.send(t.apiKey, { to, content: 'otra cosa' }, headers);
    expect(clash.status).toBe(422);
  });

  it('frees an Idempotency-Key whose request was refused before anything was recorded, and keeps one whose message failed', async () => {
    // Prepare: a body the contract refuses, then the corrected one, under one key; a send the closed window fails under another
    const { t, to } = await h.openChat();
    const refusedKey = { 'Idempotency-Key': `k-refused-${Date.now()}` };
    const failedKey = { 'Idempotency-Key': `k-failed-${Date.now()}` };

    // Act
    const refused = await h.send(t.apiKey, { to, content: '' }, refusedKey);
    const corrected = await h.send(t.apiKey, { to, content: 'corregido' }, refusedKey);
    const closed = randomPhone();
    const failed = await h.send(t.apiKey, { to: closed, content: 'hola' }, failedKey);
    const failedAgain = await h.send(t.apiKey, { to: closed, content: 'hola' }, failedKey);

    // Assess
    expect(refused.status).toBe(400);
    expect(corrected.status).toBe(200);
    expect(failed.status).toBe(400);
    expect(failedAgain.body).toEqual(failed.body);
    expect(failedAgain.headers['idempotent-replayed']).toBe('true');
  });
});

describe('conversation assignment', () => {
  it('copies the contact\'s agent onto a new conversation, counts it on the agent and emits conversation.assigned', async () => {
    // Prepare
    const t = await h.newTenant();
    const { addAgent } = await import('#shared/team/repository.ts');
    const agent = await addAgent(t.businessId, { email: `a${Date.now()}@example.com`, name: 'Ana' });
    const to = randomPhone();
    const created = await h.invoke('POST /contacts/v1', { apiKey: t.apiKey, body: { phone_number: to, name: 'Cliente', assigned_agent_id: agent.id } });
    expect(created.status).toBe(201);

    // Act
    const res = await h.send(t.apiKey, { to, type: 'template', templateName: 'hello_world', language: 'en_US' });

    // Assess
    expect(res.status).toBe(200);
    const conversation = (await h.invoke('GET /conversations/v1/{id}', { apiKey: t.apiKey, params: { id: res.body.data.conversationId } })).body.conversation;
    expect(conversation.assignedAgentId).toBe(agent.id);
    const team = (await h.invoke('GET /team/v1', { apiKey: t.apiKey })).body.agents;
    expect(team.find((a: any) => a.id === agent.id).assigned_conversations).toBe(1);
    const assigned = h.events(t.businessId).filter((e) => e.event === 'conversation.assigned');
    expect(assigned).toEqual([{ event: 'conversation.assigned', data: expect.objectContaining({ conversation_id: conversation.id, agent_id: agent.id }) }]);
  });
});
