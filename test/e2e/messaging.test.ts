/**
 * Messaging through the local stack over HTTP, as a client and the sandbox's customer meet it: an inbound
 * message, the reply in the same conversation, statuses arriving out of order, a failed send and its retry.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { startMessagingStack, randomPhone, type MessagingStack } from './messages/stack.ts';
import { SANDBOX_APP_SECRET } from '../../infra/local/sandbox/credentials.ts';

let m: MessagingStack;
beforeAll(async () => {
  m = await startMessagingStack();
}, 60_000);
afterAll(() => m?.stop());

describe('messaging over HTTP', () => {
  it('inbound → reply in the same conversation → read before delivered leaves it read', async () => {
    // Prepare: the customer writes to the demo business (the sandbox's default number).
    const key = m.stack.demo!.apiKey;
    const call = (method: string, path: string, body?: unknown) =>
      fetch(`${m.stack.url}${path}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
        .then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
    const from = randomPhone();
    const inbound = await m.sandbox('POST', '/__sandbox/inbound', { from, text: 'Hola, ¿tienen envío?' });
    expect(inbound.status).toBe(200);
    await m.stack.queues.idle();

    // Act: reply, then statuses out of order.
    const reply = await call('POST', '/messages/v1', { to: from, content: 'Sí, a todo el país.' });
    expect(reply.status).toBe(200);
    await m.status(reply.body.messages[0].wamid, 'read');
    await m.status(reply.body.messages[0].wamid, 'delivered');

    // Assess
    const conversation = await call('GET', `/conversations/v1/${reply.body.data.conversationId}`);
    expect(conversation.body.conversation).toMatchObject({ phoneNumber: from, windowOpen: true });
    const messages = await call('GET', `/conversations/v1/${reply.body.data.conversationId}/messages`);
    const inboundStored = messages.body.messages.find((x: any) => x.wamid === inbound.body.wamid);
    expect(inboundStored).toMatchObject({ direction: 'inbound', content: { body: 'Hola, ¿tienen envío?' } });
    const got = await call('GET', `/messages/v1/${reply.body.data.id}`);
    expect(got.body.message).toMatchObject({ status: 'read', deliveredAt: expect.any(String), readAt: expect.any(String) });
  });

  it('a send outside the window fails with 131047, its retry fails until the customer writes, then succeeds', async () => {
    const t = await m.tenant();
    const to = randomPhone();
    const failed = await t.call('POST', '/messages/v1', { messaging_product: 'whatsapp', to, type: 'text', text: { body: 'seguimiento' } });
    expect(failed.status).toBe(400);
    expect(failed.body).toMatchObject({ error: 'message_delivery_failed', code: '131047', data: { status: 'failed' } });

    const still = await t.call('POST', `/messages/v1/${failed.body.data.id}/retry`);
    expect(still.status).toBe(400);
    expect(still.body).toMatchObject({ error: 'retry_failed', code: '131047' });

    await t.inbound(to);
    const ok = await t.call('POST', `/messages/v1/${failed.body.data.id}/retry`);
    expect(ok.status).toBe(200);
    expect(ok.body.data).toMatchObject({ id: failed.body.data.id, status: 'sent', retriedAt: expect.any(String) });
    // (The AI worker may answer the customer too: count only this message.)
    expect((await m.sent(to)).filter((p) => p.text?.body === 'seguimiento')).toHaveLength(1);
  });

  it('knows at the sandbox a customer message a client posts to POST /webhooks/upstream: a reply, a reaction and a read receipt go out', async () => {
    // Prepare: a signed Cloud API webhook of the customer's text, posted by the client itself (decisions.md)
    const t = await m.tenant();
    const from = randomPhone();
    const wamid = `wamid.posted.${randomUUID()}`;
    const body = JSON.stringify({ object: 'whatsapp_business_account', entry: [{ id: 'waba', changes: [{ field: 'messages', value: {
      messaging_product: 'whatsapp', metadata: { display_phone_number: '15550000000', phone_number_id: t.phoneNumberId },
      contacts: [{ profile: { name: 'Ana' }, wa_id: from.slice(1) }],
      messages: [{ from: from.slice(1), id: wamid, timestamp: String(Math.floor(Date.now() / 1000)), type: 'text', text: { body: 'hola' } }],
    } }] }] });
    const posted = await fetch(`${m.stack.url}/webhooks/upstream`, { method: 'POST', body, headers: {
      'content-type': 'application/json', 'x-hub-signature-256': `sha256=${createHmac('sha256', SANDBOX_APP_SECRET).update(body).digest('hex')}`,
    } });
    expect(posted.status).toBe(200);
    await m.stack.queues.idle();

    // Act
    const reply = await t.call('POST', '/messages/v1', { to: from, content: 'hola, ¿en qué te ayudo?' });
    const reaction = await t.call('POST', '/messages/v1', { to: from, type: 'reaction', reaction: { message_id: wamid, emoji: '👍' } });
    const read = await t.call('POST', '/messages/v1', { messaging_product: 'whatsapp', status: 'read', message_id: wamid });

    // Assess
    expect([reply.status, reaction.status, read.status]).toEqual([200, 200, 200]);
  });

  it("answers the sandbox's inbound and status calls once the service has stored them: readable at once", async () => {
    const t = await m.tenant();
    for (let i = 0; i < 3; i++) {
      // Act: straight after each call, with no wait for the queues
      const from = randomPhone();
      const inbound = await m.sandbox('POST', '/__sandbox/inbound', { from, text: `hola ${i}`, phone_number_id: t.phoneNumberId });
      const read = await t.call('POST', '/messages/v1', { messaging_product: 'whatsapp', status: 'read', message_id: inbound.body.wamid });
      const reply = await t.call('POST', '/messages/v1', { to: from, content: 'hola' });
      await m.sandbox('POST', '/__sandbox/status', { wamid: reply.body.messages[0].wamid, status: 'delivered' });
      const message = await t.call('GET', `/messages/v1/${reply.body.data.id}`);

      // Assess
      expect([inbound.status, read.status, reply.status]).toEqual([200, 200, 200]);
      expect(message.body.message.status).toBe('delivered');
    }
  });

  it('refuses an upstream webhook without a valid signature', async () => {
    const res = await fetch(`${m.stack.url}/webhooks/upstream`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-hub-signature-256': 'sha256=00' }, body: '{}' });
    expect(res.status).toBe(401);
  });
});
