/**
 * Messaging through the local stack over HTTP, as a client and the sandbox's customer meet it: an inbound
 * message, the reply in the same conversation, statuses arriving out of order, a failed send and its retry.
 */
import { startMessagingStack, randomPhone, type MessagingStack } from './messages/stack.ts';

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

  it('refuses an upstream webhook without a valid signature', async () => {
    const res = await fetch(`${m.stack.url}/webhooks/upstream`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-hub-signature-256': 'sha256=00' }, body: '{}' });
    expect(res.status).toBe(401);
  });
});
