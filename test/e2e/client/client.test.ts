/**
 * The typed client (shared/client) against the local stack over HTTP: a fresh business and key for this
 * file, then every area a Node user reaches through it, including receiving and verifying a webhook.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestStack, type LocalStack } from '../../support/stack.ts';
import { WaCrmClient, WaCrmError, verifyWebhookSignature } from '#shared/client/index.ts';

let stack: LocalStack;
let wa: WaCrmClient;
let phoneNumberId: string;

const phone = () => `+5215${String(Math.floor(Math.random() * 1e8)).padStart(8, '0')}`;

/** A customer writes first, opening the 24-hour window for free-form messages. */
const inbound = async (from: string) => {
  const res = await fetch(`${stack.sandboxUrl}/__sandbox/inbound`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ from, text: 'hola', phone_number_id: phoneNumberId }),
  });
  expect(res.status).toBe(200);
  await stack.queues.idle();
};

beforeAll(async () => {
  stack = await startTestStack({ queueRetryDelayMs: 50 });
  const { newTenant } = await import('../../support/api.ts');
  const business = await newTenant(undefined, 'Client test');
  phoneNumberId = business.phoneNumberId;
  wa = new WaCrmClient({ baseUrl: stack.url, apiKey: business.apiKey });
}, 60_000);
afterAll(() => stack?.stop());

describe('typed client', () => {
  it('sends text, location, reaction and template messages', async () => {
    // Prepare
    const to = phone();
    await inbound(to);
    // Act
    const text = await wa.messages.sendText(to, 'Hola desde el cliente', { ai: { pause: true, pauseDuration: 10 } });
    const location = await wa.messages.sendLocation(to, { latitude: 19.43, longitude: -99.13, name: 'Zócalo' });
    const reaction = await wa.messages.sendReaction(to, text.data.id, '👍');
    const template = await wa.messages.sendTemplate(phone(), 'order_update', ['Ana', '#123']);
    const upstreamStyle = await wa.messages.send({ messaging_product: 'whatsapp', to, type: 'text', text: { body: 'upstream style' } });
    // Assess
    expect(text).toMatchObject({ messaging_product: 'whatsapp', data: { messageType: 'text', status: 'sent', direction: 'outbound' } });
    expect(text.messages[0].wamid).toEqual(expect.any(String));
    expect(location.data.messageType).toBe('location');
    expect(reaction.data.messageType).toBe('reaction');
    expect(template.data.messageType).toBe('template');
    expect(upstreamStyle.data.status).toBe('sent');
    expect((await wa.messages.get(text.data.id)).message).toMatchObject({ id: text.data.id });
  });

  it('throws WaCrmError with the upstream code on a failed delivery, and retry reports it still fails', async () => {
    // Prepare: no inbound message, so the 24-hour window is closed
    const to = phone();
    // Act
    const failure = await wa.messages.sendText(to, 'window closed').catch((e) => e);
    // Assess
    expect(failure).toBeInstanceOf(WaCrmError);
    expect(failure).toMatchObject({ status: 400, error: 'message_delivery_failed', code: '131047' });
    expect(failure.body.data).toMatchObject({ id: expect.any(String), status: 'failed' });
    const retry = await wa.messages.retry(failure.body.data.id).catch((e) => e);
    expect(retry).toBeInstanceOf(WaCrmError);
    expect(retry).toMatchObject({ status: 400, error: 'retry_failed', code: '131047' });
  });

  it('uploads media and sends it by id', async () => {
    // Prepare: a 1x1 PNG
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
    const to = phone();
    await inbound(to);
    // Act
    const media = await wa.media.upload(png, 'image', 'dot.png', 'image/png');
    const sent = await wa.messages.sendMedia(to, 'image', { id: media.media_id, caption: 'a dot' });
    // Assess
    expect(media).toMatchObject({ media_id: expect.any(String), mime_type: 'image/png', file_size: png.length, type: 'image' });
    expect(sent.data).toMatchObject({ messageType: 'image', status: 'sent' });
  });

  it('manages the funnel and contacts, including a partial bulk (207)', async () => {
    // Prepare
    const { stage: lead } = await wa.funnel.createStage({ name: 'Lead' });
    const { stage: won } = await wa.funnel.createStage({ name: 'Won', color: '#10b981' });
    const { contact } = await wa.contacts.create({ phone_number: phone(), name: 'Ana', tags: ['vip'] });
    // Act
    const moved = await wa.funnel.moveContact(contact.id, lead.id);
    const reordered = await wa.funnel.reorderStages([won.id, lead.id]);
    const bulk = await wa.contacts.bulk({ operation: 'create', contacts: [{ phone_number: phone(), name: 'Bea' }, { phone_number: contact.phone_number }] });
    const notFound = await wa.funnel.getStage('00000000-0000-4000-8000-000000000000').catch((e) => e);
    // Assess
    expect(lead).toMatchObject({ name: 'Lead', color: '#6366f1', position: 0 });
    expect(moved).toMatchObject({ contact_id: contact.id, previous_stage: null, new_stage: { id: lead.id, name: 'Lead' } });
    expect(reordered.stages.map((s) => s.id)).toEqual([won.id, lead.id]);
    expect(bulk).toMatchObject({ status: 207, operation: 'create', success_count: 1, error_count: 1 });
    expect(bulk.results[1]).toMatchObject({ success: false, error: 'duplicate_contact', existing_contact_id: contact.id });
    expect(notFound).toMatchObject({ status: 404, error: 'not_found' });
    expect((await wa.contacts.get(contact.id)).contact.id).toBe(contact.id);
  });

  it('builds static and dynamic segments', async () => {
    // Prepare
    const { contact } = await wa.contacts.create({ phone_number: phone(), name: 'Caro', tags: ['client-test-tag'] });
    // Act
    const { data: dynamic } = await wa.segments.create({ name: 'Tagged', type: 'dynamic', rules: { version: 3, filters: { tags: { any: ['client-test-tag'] } } } });
    const preview = await wa.segments.preview({ version: 3, filters: { tags: { any: ['client-test-tag'] } } });
    const { data: statics } = await wa.segments.create({ name: 'Hand-picked', type: 'static' });
    const members = await wa.segments.members(statics.id, { action: 'add', contactIds: [contact.id] });
    // Assess
    expect(dynamic).toMatchObject({ type: 'dynamic', contactCount: 1, rulesFormat: 'filters' });
    expect(preview.data.count).toBe(1);
    expect(members.data).toMatchObject({ action: 'add', affected: 1, contactCount: 1 });
    expect((await wa.segments.list()).data.map((s) => s.id)).toEqual(expect.arrayContaining([dynamic.id, statics.id]));
  });

  it('controls the AI and lists the team', async () => {
    // Prepare
    const to = phone();
    await inbound(to);
    const sent = await wa.messages.sendText(to, 'hola');
    // Act
    const toggled = await wa.ai.setConversation(sent.data.conversationId, false);
    const paused = await wa.ai.pauseConversation(sent.data.conversationId, 30);
    const global = await wa.ai.pauseAll(15);
    const bad = await wa.ai.pauseAll(0).catch((e) => e);
    const off = await wa.ai.toggleAll(false);
    // Assess
    expect(toggled.settings.aiEnabled).toBe(false);
    expect(paused).toMatchObject({ success: true, pausedUntil: expect.any(String) });
    expect(global.success).toBe(true);
    expect(bad).toMatchObject({ status: 400, error: 'Invalid duration' });
    expect(off).toEqual({ success: true, enabled: false });
    expect((await wa.ai.status()).enabled).toBe(false);
    expect((await wa.team.list()).agents).toEqual([]);
  });

  it('subscribes a webhook, receives a signed delivery and verifies it', async () => {
    // Prepare: a local receiver that keeps the raw bytes and headers
    const received: { body: string; headers: Record<string, any> }[] = [];
    const server: Server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c)).on('end', () => {
        received.push({ body: Buffer.concat(chunks).toString('utf8'), headers: req.headers });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
      const { data: sub } = await wa.webhooks.create({ name: 'client test', url, events: ['funnel_stage.created'] });
      // Act
      await wa.funnel.createStage({ name: 'Webhook stage' });
      await stack.queues.idle();
      // Assess
      expect(sub.secret).toEqual(expect.any(String));
      expect(received).toHaveLength(1);
      const delivery = received[0];
      expect(JSON.parse(delivery.body)).toMatchObject({ event: 'funnel_stage.created', data: { name: 'Webhook stage' } });
      expect(verifyWebhookSignature(delivery.body, delivery.headers['x-webhook-signature'], sub.secret!)).toBe(true);
      expect(verifyWebhookSignature(delivery.body, delivery.headers['x-webhook-signature'], 'another secret')).toBe(false);
      const rotated = await wa.webhooks.regenerateSecret(sub.id);
      expect(verifyWebhookSignature(delivery.body, delivery.headers['x-webhook-signature'], rotated.data.secret!)).toBe(false);
      expect((await wa.webhooks.list()).data.map((s) => s.id)).toContain(sub.id);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('reports 401 for a wrong key as WaCrmError', async () => {
    // Prepare
    const stranger = new WaCrmClient({ baseUrl: stack.url, apiKey: 'wak_' + 'x'.repeat(40) });
    // Act
    const err = await stranger.team.list().catch((e) => e);
    // Assess
    expect(err).toBeInstanceOf(WaCrmError);
    expect(err).toMatchObject({ status: 401, error: 'unauthorized' });
  });
});
