/**
 * Upstream webhooks: the verification handshake, the signature check, incoming messages (stored once,
 * contact and conversation created, window opened, message.received, AI job) and delivery statuses
 * (forward only, out-of-order and duplicate deliveries change nothing).
 */
import { createHmac } from 'node:crypto';
import { startHarness, randomPhone, type Harness } from './harness.ts';
import { TEST_UPSTREAM } from '../../support/upstream-secret.ts';
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { keys } from '#shared/store/keys.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h?.stop());

const sign = (body: string) => `sha256=${createHmac('sha256', TEST_UPSTREAM.appSecret).update(body).digest('hex')}`;

describe('GET /webhooks/upstream', () => {
  it('echoes hub.challenge as text for the right verify token, 403 otherwise', async () => {
    const ok = await h.invoke('GET /webhooks/upstream', { query: { 'hub.mode': 'subscribe', 'hub.verify_token': TEST_UPSTREAM.verifyToken, 'hub.challenge': '1158201444' } });
    expect(ok.status).toBe(200);
    expect(ok.body).toBe(1158201444);
    expect(ok.headers['content-type']).toMatch(/text\/plain/);
    expect(ok.headers['x-content-type-options']).toBe('nosniff');
    const bad = await h.invoke('GET /webhooks/upstream', { query: { 'hub.mode': 'subscribe', 'hub.verify_token': 'wrong', 'hub.challenge': '1' } });
    expect(bad.status).toBe(403);
  });

  it('names a missing hub.challenge (400) when mode and token are right, and keeps 403 for a wrong token without one', async () => {
    const noChallenge = await h.invoke('GET /webhooks/upstream', { query: { 'hub.mode': 'subscribe', 'hub.verify_token': TEST_UPSTREAM.verifyToken } });
    expect(noChallenge.status).toBe(400);
    expect(noChallenge.body).toMatchObject({ error: 'validation_error', details: { 'hub.challenge': [expect.any(String)] } });
    const wrongToken = await h.invoke('GET /webhooks/upstream', { query: { 'hub.mode': 'subscribe', 'hub.verify_token': 'wrong' } });
    expect(wrongToken.status).toBe(403);
  });
});

describe('POST /webhooks/upstream', () => {
  it.each([
    ['a missing signature', undefined],
    ['a wrong signature', 'sha256=' + '0'.repeat(64)],
    ['a signature with another secret', `sha256=${createHmac('sha256', 'other').update('{}').digest('hex')}`],
  ])('answers 401 for %s and stores nothing', async (_label, signature) => {
    h.takeUpstreamEvents();
    const body = JSON.stringify({ object: 'whatsapp_business_account', entry: [] });
    const res = await h.invoke('POST /webhooks/upstream', { rawBody: body, headers: signature ? { 'x-hub-signature-256': signature } : {} });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'unauthorized', message: expect.any(String) });
    expect(h.takeUpstreamEvents()).toEqual([]);
  });

  it('acknowledges a signed body at once and queues it for the worker', async () => {
    h.takeUpstreamEvents();
    const body = JSON.stringify({ object: 'whatsapp_business_account', entry: [] });
    const res = await h.invoke('POST /webhooks/upstream', { rawBody: body, headers: { 'x-hub-signature-256': sign(body) } });
    expect(res.status).toBe(200);
    expect(h.takeUpstreamEvents()).toEqual([body]);
  });
});

describe('incoming messages', () => {
  it('stores the message, creates contact and conversation, opens the window, emits message.received and asks the AI', async () => {
    // Prepare
    const t = await h.newTenant();
    const from = randomPhone();
    h.takeQueue('ai');

    // Act
    const { wamid } = await h.inbound(t.phoneNumberId, from, { text: 'Quiero información', name: 'Ana' });
    expect(await h.drain()).toBe(0);

    // Assess
    const list = await h.invoke('GET /conversations/v1', { apiKey: t.apiKey });
    expect(list.status).toBe(200);
    expect(list.body.conversations).toHaveLength(1);
    const conversation = list.body.conversations[0];
    expect(conversation).toMatchObject({ phoneNumber: from, windowOpen: true, aiEnabled: true, aiMode: 'auto', aiPausedUntil: null, lastInboundAt: expect.any(String) });
    const messages = await h.invoke('GET /conversations/v1/{id}/messages', { apiKey: t.apiKey, params: { id: conversation.id } });
    expect(messages.body.messages).toEqual([expect.objectContaining({ direction: 'inbound', wamid, messageType: 'text', content: { body: 'Quiero información' }, status: 'received' })]);
    const received = h.events(t.businessId).filter((e) => e.event === 'message.received');
    expect(received).toHaveLength(1);
    expect(received[0].data.messages[0]).toMatchObject({ id: wamid, from: from.slice(1), text: { body: 'Quiero información' } });
    const ai = h.takeQueue('ai').map((m) => JSON.parse(m.body));
    expect(ai).toEqual([{ businessId: t.businessId, conversationId: conversation.id, messageId: messages.body.messages[0].id, receivedAt: expect.any(String) }]);
    const contact = await h.invoke('GET /contacts/v1/{id}', { apiKey: t.apiKey, params: { id: conversation.contactId } });
    expect(contact.status).toBe(200);
    expect(contact.body.contact.phone_number).toBe(from);
    // The contact made by the message was last in contact at the message, in its contact.created too.
    const [created] = h.events(t.businessId).filter((e) => e.event === 'contact.created');
    expect(created.data.contact).toMatchObject({ phone_number: from, origin: 'inbound', last_contact_at: conversation.lastInboundAt });
  });

  it("names a contact the business made without a name after the customer's profile, and never renames one with a name", async () => {
    // Prepare: two contacts of the business, one without a name
    const t = await h.newTenant();
    const [nameless, named] = [randomPhone(), randomPhone()];
    const a = await h.invoke('POST /contacts/v1', { apiKey: t.apiKey, body: { phone_number: nameless } });
    const b = await h.invoke('POST /contacts/v1', { apiKey: t.apiKey, body: { phone_number: named, name: 'Roberto (proveedor)' } });

    // Act
    await h.inbound(t.phoneNumberId, nameless, { text: 'Hola', name: 'Ana Pérez' });
    await h.inbound(t.phoneNumberId, named, { text: 'Hola', name: 'Beto' });
    expect(await h.drain()).toBe(0);

    // Assess
    const get = async (id: string) => (await h.invoke('GET /contacts/v1/{id}', { apiKey: t.apiKey, params: { id } })).body.contact;
    expect(await get(a.body.contact.id)).toMatchObject({ name: 'Ana Pérez' });
    expect(await get(b.body.contact.id)).toMatchObject({ name: 'Roberto (proveedor)' });
    const updated = h.events(t.businessId).filter((e) => e.event === 'contact.updated');
    expect(updated.map((e) => [e.data.contact?.id ?? e.data.contact_id, e.data.changed_fields])).toEqual([[a.body.contact.id, ['name']]]);
  });

  it('puts a message that races the close of its conversation into the next one, never into the closed one', async () => {
    const wrong: string[] = [];
    for (let round = 0; round < 8; round++) {
      // Prepare: an open conversation, and eight more messages of the customer waiting in the queue.
      const { t, to } = await h.openChat();
      const [open] = (await h.invoke('GET /conversations/v1', { apiKey: t.apiKey })).body.conversations;
      for (let i = 0; i < 8; i++) await h.inbound(t.phoneNumberId, to, { text: `m${i}` });

      // Act: the messages are stored while the conversation is closed.
      const [, closed] = await Promise.all([h.drain(), h.invoke('POST /conversations/v1/{id}/close', { apiKey: t.apiKey, params: { id: open.id } })]);

      // Assess: nothing touched the conversation after its close, and no message was lost.
      const after = (await h.invoke('GET /conversations/v1/{id}', { apiKey: t.apiKey, params: { id: open.id } })).body.conversation;
      const all = (await h.invoke('GET /conversations/v1', { apiKey: t.apiKey })).body.conversations;
      let messages = 0;
      for (const c of all) messages += (await h.invoke('GET /conversations/v1/{id}/messages', { apiKey: t.apiKey, params: { id: c.id } })).body.messages.length;
      if (closed.status !== 200 || after.updatedAt !== after.closedAt || messages !== 9) wrong.push(`round ${round}: close ${closed.status}, closed ${after.closedAt}, updated ${after.updatedAt}, ${messages} messages`);
    }
    expect(wrong).toEqual([]);
  }, 60_000);

  it("gives a message whose contact is deleted while its conversation is being opened to the number's next contact, opening nothing for the deleted one", async () => {
    // Prepare: a contact who writes in; the contact is deleted just before their first conversation is written
    const t = await h.newTenant();
    const to = randomPhone();
    const created = (await h.invoke('POST /contacts/v1', { apiKey: t.apiKey, body: { phone_number: to } })).body.contact;
    await h.inbound(t.phoneNumberId, to, { text: 'hola' });
    const { dynamo } = await import('#shared/store/client.ts');
    const name = `delete-before-open-${created.id}`;
    let armed = true;
    dynamo.middlewareStack.add((next) => async (args) => {
      if (armed && JSON.stringify((args as { input?: unknown }).input ?? {}).includes('"openConversation"')) {
        armed = false;
        expect((await h.invoke('DELETE /contacts/v1/{id}', { apiKey: t.apiKey, params: { id: created.id } })).status).toBe(200);
      }
      return next(args);
    }, { step: 'initialize', name });

    // Act
    let failures;
    try {
      failures = await h.drain();
    } finally {
      dynamo.middlewareStack.remove(name);
    }

    // Assess: the message is the new contact's, in its conversation; the deleted contact has none
    expect([armed, failures]).toEqual([false, 0]);
    const contacts = (await h.invoke('GET /contacts/v1', { apiKey: t.apiKey })).body.contacts;
    expect(contacts).toEqual([expect.objectContaining({ phone_number: to })]);
    expect(contacts[0].id).not.toBe(created.id);
    const conversations = (await h.invoke('GET /conversations/v1', { apiKey: t.apiKey })).body.conversations;
    expect(conversations.map((c: any) => [c.contactId, c.status])).toEqual([[contacts[0].id, 'open']]);
    const messages = (await h.invoke('GET /conversations/v1/{id}/messages', { apiKey: t.apiKey, params: { id: conversations[0].id } })).body.messages;
    expect(messages.map((m: any) => m.content?.body)).toEqual(['hola']);
  });

  it('lists a message that comes in after a reply sent earlier in the same second after that reply, newest first', async () => {
    // Prepare: early in a second, so that the customer's message, the reply and the next message share it
    const { t, to } = await h.openChat();
    while (Date.now() % 1000 > 200) await new Promise((r) => setTimeout(r, 20));
    const second = Math.floor(Date.now() / 1000);

    // Act
    const reply = await h.send(t.apiKey, { to, content: 'reply' });
    await h.inbound(t.phoneNumberId, to, { text: 'after the reply', timestamp: second });
    expect(await h.drain()).toBe(0);

    // Assess
    const messages = (await h.invoke('GET /conversations/v1/{id}/messages', { apiKey: t.apiKey, params: { id: reply.body.data.conversationId } })).body.messages;
    expect(messages.slice(0, 2).map((m: any) => m.content?.body)).toEqual(['after the reply', 'reply']);
    expect(Date.parse(messages[0].createdAt)).toBeGreaterThan(Date.parse(messages[1].createdAt));
  });

  it("takes an incoming message's time from Meta's timestamp, to the millisecond of its coming in when that falls in the same second", async () => {
    const { writtenAt } = await import('#shared/messages/inbound.ts');
    const second = Math.floor(Date.now() / 1000) - 10;
    expect(writtenAt(String(second), second * 1000 + 347)).toBe(new Date(second * 1000 + 347).toISOString());
    expect(writtenAt(String(second), second * 1000 + 1347)).toBe(new Date(second * 1000).toISOString());
  });

  it("keeps the window at the customer's latest message when messages of one conversation are stored at once, newest first", async () => {
    const wrong: string[] = [];
    for (let round = 0; round < 5; round++) {
      // Prepare: an open conversation, and eight more messages waiting in the queue, the newest queued first.
      const { t, to } = await h.openChat();
      const base = Date.now() + 60_000;
      for (let i = 8; i > 0; i--) await h.inbound(t.phoneNumberId, to, { text: `m${i}`, timestamp: base + i * 1000 });

      // Act: each webhook in an invocation of its own, all at once (as Lambda runs batches side by side).
      await Promise.all(h.takeUpstreamEvents().map((body) => h.runWorker([body])));

      // Assess: the window runs from the latest message, whichever was stored last.
      const [conversation] = (await h.invoke('GET /conversations/v1', { apiKey: t.apiKey })).body.conversations;
      const latest = new Date(Math.floor((base + 8000) / 1000) * 1000).toISOString();
      if (conversation.lastInboundAt !== latest || conversation.lastMessageAt !== latest) wrong.push(`round ${round}: lastInboundAt ${conversation.lastInboundAt}, lastMessageAt ${conversation.lastMessageAt}, latest ${latest}`);
    }
    expect(wrong).toEqual([]);
  }, 60_000);

  it('finds a conversation and a message by their ids in upper case too, as contacts are found', async () => {
    const { t } = await h.openChat();
    const [conversation] = (await h.invoke('GET /conversations/v1', { apiKey: t.apiKey })).body.conversations;
    const [message] = (await h.invoke('GET /conversations/v1/{id}/messages', { apiKey: t.apiKey, params: { id: conversation.id } })).body.messages;

    const byConversation = await h.invoke('GET /conversations/v1/{id}', { apiKey: t.apiKey, params: { id: conversation.id.toUpperCase() } });
    const byMessage = await h.invoke('GET /messages/v1/{id}', { apiKey: t.apiKey, params: { id: message.id.toUpperCase() } });

    expect([byConversation.status, byConversation.body.conversation?.id]).toEqual([200, conversation.id]);
    expect([byMessage.status, byMessage.body.message?.id]).toEqual([200, message.id]);
  });

  it('stores nothing twice on a duplicate webhook delivery, and asks the AI again about the same message', async () => {
    const t = await h.newTenant();
    const from = randomPhone();
    await h.inbound(t.phoneNumberId, from);
    const [body] = h.takeUpstreamEvents();
    h.takeQueue('ai');

    expect(await h.runWorker([body])).toBe(0);
    expect(await h.runWorker([body, body])).toBe(0);

    const list = await h.invoke('GET /conversations/v1', { apiKey: t.apiKey });
    const messages = await h.invoke('GET /conversations/v1/{id}/messages', { apiKey: t.apiKey, params: { id: list.body.conversations[0].id } });
    expect(messages.body.messages).toHaveLength(1);
    expect(h.events(t.businessId).filter((e) => e.event === 'message.received')).toHaveLength(1);
    // The agent replies to a message once however many jobs name it (test/integration/ai/agent.test.ts).
    const ai = h.takeQueue('ai').map((m) => JSON.parse(m.body));
    expect(ai).toHaveLength(3);
    expect(new Set(ai.map((j) => j.messageId))).toEqual(new Set([messages.body.messages[0].id]));
  });

  it('stores the same upstream message for each business whose number it reaches: wamids are looked up per business', async () => {
    // Prepare: one signed body for the first business, the same with the second business's number
    const [t1, t2] = [await h.newTenant(), await h.newTenant()];
    const { wamid } = await h.inbound(t1.phoneNumberId, randomPhone());
    const [body] = h.takeUpstreamEvents();
    const other = body.replaceAll(t1.phoneNumberId, t2.phoneNumberId);
    expect(other).not.toBe(body);

    // Act
    expect(await h.runWorker([body, other])).toBe(0);

    // Assess: each business holds the message once, with its own event
    for (const t of [t1, t2]) {
      const [conversation] = (await h.invoke('GET /conversations/v1', { apiKey: t.apiKey })).body.conversations;
      const messages = await h.invoke('GET /conversations/v1/{id}/messages', { apiKey: t.apiKey, params: { id: conversation.id } });
      expect(messages.body.messages).toEqual([expect.objectContaining({ wamid, direction: 'inbound' })]);
      expect(h.events(t.businessId).filter((e) => e.event === 'message.received')).toHaveLength(1);
    }
  });

  it("asks the AI only about a customer's turn: not a reaction, edit, system notice, unsupported, contentless or group message, nor one older than the window", async () => {
    // Prepare: Meta's shapes of each (the Cloud API webhook reference), from one customer
    const t = await h.newTenant();
    const from = randomPhone().slice(1);
    const now = Math.floor(Date.now() / 1000);
    const message = (id: string, extra: Record<string, unknown>, timestamp = now) => JSON.stringify({
      object: 'whatsapp_business_account',
      entry: [{ id: 'waba', changes: [{ field: 'messages', value: {
        messaging_product: 'whatsapp', metadata: { display_phone_number: '15550000000', phone_number_id: t.phoneNumberId },
        contacts: [{ profile: { name: 'Ana' }, wa_id: from }],
        messages: [{ from, id, timestamp: String(timestamp), ...extra }],
      } }] }],
    });
    const notTurns = [
      message('wamid.reaction', { type: 'reaction', reaction: { message_id: 'wamid.earlier', emoji: '👍' } }),
      message('wamid.edit', { type: 'edit', edit: { original_message_id: 'wamid.earlier', message: { type: 'text', text: { body: 'fixed' } } } }),
      message('wamid.system', { type: 'system', system: { body: 'Ana changed their phone number', type: 'user_changed_number' } }),
      message('wamid.unsupported', { type: 'unsupported', errors: [{ code: 131051, title: 'Message type unknown' }] }),
      message('wamid.group', { type: 'text', text: { body: 'hola grupo' }, group_id: 'group-1' }),
      // pywa's interactive_message_with_err: Meta could not give the reply's content (its errors come beside the message).
      message('wamid.no-content', { type: 'interactive', context: { from: '15550000000', id: 'wamid.earlier' } }),
      message('wamid.old', { type: 'text', text: { body: 'from two days ago' } }, now - 2 * 86_400),
    ];
    h.takeQueue('ai');

    // Act
    expect(await h.runWorker(notTurns)).toBe(0);
    const asked = h.takeQueue('ai').length;
    expect(await h.runWorker([message('wamid.turn', { type: 'text', text: { body: 'hola' } })])).toBe(0);

    // Assess: every message stored, only the last one put to the AI
    const [conversation] = (await h.invoke('GET /conversations/v1', { apiKey: t.apiKey })).body.conversations;
    const messages = await h.invoke('GET /conversations/v1/{id}/messages', { apiKey: t.apiKey, params: { id: conversation.id }, query: { limit: '20' } });
    expect(messages.body.messages).toHaveLength(notTurns.length + 1);
    expect(asked).toBe(0);
    expect(h.takeQueue('ai').map((m) => JSON.parse(m.body).messageId)).toEqual([messages.body.messages.find((m: any) => m.wamid === 'wamid.turn').id]);
  });

  it('asks the AI on the redelivery when the delivery that stored the message could not queue the AI job', async () => {
    // Prepare: the ai queue refuses the first send (a queue URL SQS does not know)
    const t = await h.newTenant();
    await h.inbound(t.phoneNumberId, randomPhone());
    const [body] = h.takeUpstreamEvents();
    h.takeQueue('ai');
    const url = process.env.QUEUE_URL_AI!;
    process.env.QUEUE_URL_AI = url.replace(/\/ai$/, '/gone');

    // Act: the record fails after the message is stored, and the queue delivers it again
    let failed: number;
    try {
      failed = await h.runWorker([body]);
    } finally {
      process.env.QUEUE_URL_AI = url;
    }
    const retried = await h.runWorker([body]);

    // Assess
    expect([failed, retried]).toEqual([1, 0]);
    const list = await h.invoke('GET /conversations/v1', { apiKey: t.apiKey });
    const messages = await h.invoke('GET /conversations/v1/{id}/messages', { apiKey: t.apiKey, params: { id: list.body.conversations[0].id } });
    expect(messages.body.messages).toHaveLength(1);
    expect(h.takeQueue('ai').map((m) => JSON.parse(m.body))).toEqual([
      { businessId: t.businessId, conversationId: list.body.conversations[0].id, messageId: messages.body.messages[0].id, receivedAt: expect.any(String) },
    ]);
  });

  it('puts the reply to an inbound message in the same conversation, newest first, page by page', async () => {
    const t = await h.newTenant();
    const from = randomPhone();
    await h.inbound(t.phoneNumberId, from, { text: 'hola' });
    await h.drain();
    const reply = await h.send(t.apiKey, { to: from, content: 'hola, ¿en qué te ayudo?' });
    expect(reply.status).toBe(200);

    const page1 = await h.invoke('GET /conversations/v1/{id}/messages', { apiKey: t.apiKey, params: { id: reply.body.data.conversationId }, query: { limit: '1' } });
    expect(page1.body.messages).toEqual([expect.objectContaining({ id: reply.body.data.id, direction: 'outbound' })]);
    expect(page1.body.next_cursor).toEqual(expect.any(String));
    const page2 = await h.invoke('GET /conversations/v1/{id}/messages', { apiKey: t.apiKey, params: { id: reply.body.data.conversationId }, query: { limit: '1', cursor: page1.body.next_cursor } });
    expect(page2.body.messages).toEqual([expect.objectContaining({ direction: 'inbound', content: { body: 'hola' } })]);
    // A last page that is exactly full ends the list: no cursor to an empty page.
    expect(page2.body.next_cursor).toBeNull();
    const conversations = await h.invoke('GET /conversations/v1', { apiKey: t.apiKey, query: { limit: '1' } });
    expect(conversations.body).toMatchObject({ conversations: [expect.objectContaining({ id: reply.body.data.conversationId })], next_cursor: null });
  });
});

describe('delivery statuses', () => {
  const sentMessage = async () => {
    const t = await h.newTenant();
    const to = randomPhone();
    const res = await h.send(t.apiKey, { to, type: 'template', templateName: 'hello_world', language: 'en_US' });
    expect(res.status).toBe(200);
    return { t, id: res.body.data.id as string, wamid: res.body.messages[0].wamid as string };
  };
  const statusOf = async (apiKey: string, id: string) => (await h.invoke('GET /messages/v1/{id}', { apiKey, params: { id } })).body.message;
  const statusEvents = (businessId: string) => h.events(businessId).map((e) => e.event).filter((e) => ['message.delivered', 'message.read', 'message.failed'].includes(e));

  it('moves sent → delivered → read, each with its event', async () => {
    const { t, id, wamid } = await sentMessage();
    await h.status(wamid, 'delivered');
    await h.drain();
    expect(await statusOf(t.apiKey, id)).toMatchObject({ status: 'delivered', deliveredAt: expect.any(String) });
    await h.status(wamid, 'read');
    await h.drain();
    expect(await statusOf(t.apiKey, id)).toMatchObject({ status: 'read', readAt: expect.any(String) });
    expect(statusEvents(t.businessId)).toEqual(['message.delivered', 'message.read']);
  });

  it('never moves backwards when read arrives before delivered, ignores duplicates, and emits the delivery a read implies', async () => {
    const { t, id, wamid } = await sentMessage();
    await h.status(wamid, 'delivered');
    await h.status(wamid, 'read');
    const [delivered, read] = h.takeUpstreamEvents();
    expect(await h.runWorker([read, read, delivered, delivered])).toBe(0);
    const message = await statusOf(t.apiKey, id);
    expect(message).toMatchObject({ status: 'read', deliveredAt: message.readAt, readAt: expect.any(String) });
    expect(statusEvents(t.businessId)).toEqual(['message.delivered', 'message.read']);
    const implied = h.events(t.businessId).find((e) => e.event === 'message.delivered')!;
    expect(implied.data).toMatchObject({ status: 'delivered', delivered_at: message.readAt, wamid });
    // Each event carries the status object it stands for: the receipt, as a delivered one, in the implied delivery.
    expect(implied.data.statuses).toEqual([expect.objectContaining({ id: wamid, status: 'delivered' })]);
    const readEvent = h.events(t.businessId).find((e) => e.event === 'message.read')!;
    expect(readEvent.data.statuses).toEqual([expect.objectContaining({ id: wamid, status: 'read' })]);
  });

  it('keeps a delivered message delivered when a failed status comes after the receipt (no retry can send it twice)', async () => {
    const { t, id, wamid } = await sentMessage();
    await h.status(wamid, 'delivered');
    await h.drain();
    await h.status(wamid, 'failed', { code: 131049 });
    await h.drain();

    expect(await statusOf(t.apiKey, id)).toMatchObject({ status: 'delivered', deliveredAt: expect.any(String) });
    expect(statusEvents(t.businessId)).toEqual(['message.delivered']);
    const retry = await h.invoke('POST /messages/v1/{id}/retry', { apiKey: t.apiKey, params: { id } });
    expect(retry.status).toBe(400);
    expect(retry.body.error).toBe('invalid_state');
  });

  it('gives the same events, in order, when delivered and read are applied at the same time', async () => {
    for (let round = 0; round < 8; round++) {
      const { t, id, wamid } = await sentMessage();
      await h.status(wamid, 'delivered');
      await h.status(wamid, 'read');
      const [delivered, read] = h.takeUpstreamEvents();
      const [first, second] = round % 2 === 0 ? [delivered, read] : [read, delivered];
      expect(await Promise.all([h.runWorker([first]), h.runWorker([second])])).toEqual([0, 0]);
      expect(await statusOf(t.apiKey, id)).toMatchObject({ status: 'read', deliveredAt: expect.any(String), readAt: expect.any(String) });
      // The outbox's order: by event id (time, then id).
      const ordered = h.events(t.businessId).filter((e) => e.event.startsWith('message.')).map((e) => e.event);
      expect(ordered.filter((e) => e !== 'message.sent')).toEqual(['message.delivered', 'message.read']);
    }
  });

  it('moves to failed with the upstream error, and nothing moves it on', async () => {
    const { t, id, wamid } = await sentMessage();
    await h.status(wamid, 'failed', { code: 131026 });
    await h.status(wamid, 'delivered');
    await h.drain();
    expect(await statusOf(t.apiKey, id)).toMatchObject({ status: 'failed', error: { code: '131026', error: 'user_blocked' } });
    const failed = h.events(t.businessId).filter((e) => e.event === 'message.failed');
    expect(failed).toHaveLength(1);
    expect(failed[0].data).toMatchObject({ message_id: id, wamid, error: { code: '131026' } });
  });

  it('applies a status only to the attempt whose wamid it names: a late one of a retried send changes nothing', async () => {
    // Prepare: sent as W1, failed, retried and sent as W2
    const { t, id, wamid: first } = await sentMessage();
    await h.status(first, 'failed', { code: 131026 });
    await h.drain();
    const retry = await h.invoke('POST /messages/v1/{id}/retry', { apiKey: t.apiKey, params: { id } });
    expect(retry.status).toBe(200);
    const second = retry.body.data.messageId as string;

    // Act: the old wamid's statuses again (Meta delivers webhooks at least once), then the new one's
    await h.status(first, 'failed', { code: 131026 });
    await h.status(first, 'delivered');
    await h.drain();
    const afterOld = await statusOf(t.apiKey, id);
    await h.status(second, 'delivered');
    await h.drain();

    // Assess
    expect(afterOld).toMatchObject({ status: 'sent', wamid: second, error: null });
    expect(await statusOf(t.apiKey, id)).toMatchObject({ status: 'delivered', wamid: second });
    expect(statusEvents(t.businessId)).toEqual(['message.failed', 'message.delivered']);
    expect(h.events(t.businessId).find((e) => e.event === 'message.delivered')!.data.wamid).toBe(second);
  });

  it('finds a message by the global wamid pointer of a table written before 2026-11-27, only for the business it names', async () => {
    // Prepare: the message's pointer in its old form
    const { t, id, wamid } = await sentMessage();
    const other = await h.newTenant();
    const { db, table } = await import('#shared/store/client.ts');
    await db.send(new DeleteCommand({ TableName: table(), Key: keys.wamid(t.businessId, wamid) }));
    await db.send(new PutCommand({ TableName: table(), Item: { ...keys.legacyWamid(wamid), type: 'wamid', businessId: t.businessId, messageId: id } }));

    // Act: the status for another business's number, then for the message's own
    await h.status(wamid, 'delivered');
    const [body] = h.takeUpstreamEvents();
    // (unknown to that business: asked for again, as a status of a send not stored yet is)
    expect(await h.runWorker([body.replaceAll(t.phoneNumberId, other.phoneNumberId)])).toBe(1);
    const untouched = await statusOf(t.apiKey, id);
    expect(await h.runWorker([body])).toBe(0);

    // Assess
    expect(untouched).toMatchObject({ status: 'sent' });
    expect(await statusOf(t.apiKey, id)).toMatchObject({ status: 'delivered' });
    expect(h.events(other.businessId).filter((e) => e.event === 'message.delivered')).toEqual([]);
  });

  it('reports a failed status without errors (optional in Meta\'s schema) with code unknown, not an HTTP status', async () => {
    // Prepare
    const { t, id, wamid } = await sentMessage();
    const body = { object: 'whatsapp_business_account', entry: [{ id: 'w', changes: [{ field: 'messages', value: {
      metadata: { phone_number_id: t.phoneNumberId }, statuses: [{ id: wamid, status: 'failed', timestamp: String(Math.floor(Date.now() / 1000)) }],
    } }] }] };

    // Act
    expect(await h.runWorker([JSON.stringify(body)])).toBe(0);

    // Assess
    expect(await statusOf(t.apiKey, id)).toMatchObject({ status: 'failed', error: { code: 'unknown', error: 'upstream_error', message: expect.any(String) } });
    expect(h.events(t.businessId).find((e) => e.event === 'message.failed')!.data.error).toMatchObject({ code: 'unknown' });
  });

  it('ignores a status named like an Object.prototype member (constructor, __proto__, toString): no worker failure, no change', async () => {
    // Prepare
    const { t, id, wamid } = await sentMessage();
    const webhook = (status: string) => JSON.stringify({ object: 'whatsapp_business_account', entry: [{ id: 'w', changes: [{ field: 'messages', value: {
      metadata: { phone_number_id: t.phoneNumberId }, statuses: [{ id: wamid, status, timestamp: String(Math.floor(Date.now() / 1000)) }],
    } }] }] });

    // Act
    const failures = await h.runWorker(['constructor', '__proto__', 'toString', 'hasOwnProperty'].map(webhook));

    // Assess
    expect(failures).toBe(0);
    expect(await statusOf(t.apiKey, id)).toMatchObject({ status: 'sent' });
    expect(statusEvents(t.businessId)).toEqual([]);
  });

  it('applies a status that overtakes its send\'s settle by a moment without handing it back to the queue', async () => {
    // Prepare: a sent message whose wamid pointer is written only 250 ms after its status comes in
    const { t, id, wamid } = await sentMessage();
    const { db, table } = await import('#shared/store/client.ts');
    const pointer = (await db.send(new GetCommand({ TableName: table(), Key: keys.wamid(t.businessId, wamid) }))).Item!;
    await db.send(new DeleteCommand({ TableName: table(), Key: keys.wamid(t.businessId, wamid) }));
    await h.status(wamid, 'delivered');
    const [body] = h.takeUpstreamEvents();

    // Act
    const settled = new Promise((r) => setTimeout(r, 250)).then(() => db.send(new PutCommand({ TableName: table(), Item: pointer })));
    const failures = await h.runWorker([body]);
    await settled;

    // Assess
    expect(failures).toBe(0);
    expect(await statusOf(t.apiKey, id)).toMatchObject({ status: 'delivered' });
  });

  it('asks SQS to deliver again a fresh status for a wamid not stored yet, and drops an old one', async () => {
    const t = await h.newTenant();
    const fresh = { object: 'whatsapp_business_account', entry: [{ id: 'w', changes: [{ field: 'messages', value: { metadata: { phone_number_id: t.phoneNumberId }, statuses: [{ id: 'wamid.notyet', status: 'delivered', timestamp: String(Math.floor(Date.now() / 1000)) }] } }] }] };
    const old = JSON.parse(JSON.stringify(fresh));
    old.entry[0].changes[0].value.statuses[0].timestamp = String(Math.floor(Date.now() / 1000) - 3600);
    expect(await h.runWorker([JSON.stringify(fresh)])).toBe(1);
    expect(await h.runWorker([JSON.stringify(old)])).toBe(0);
  });

  it('processes every other part of a body before asking again for a status it does not know yet', async () => {
    // Prepare: a fresh status of a wamid not stored yet, then an incoming message, in one body
    const t = await h.newTenant();
    const from = randomPhone().slice(1);
    const now = String(Math.floor(Date.now() / 1000));
    const meta = { phone_number_id: t.phoneNumberId };
    const body = { object: 'whatsapp_business_account', entry: [
      { id: 'w', changes: [{ field: 'messages', value: { metadata: meta, statuses: [{ id: 'wamid.notyet2', status: 'delivered', timestamp: now }] } }] },
      { id: 'w', changes: [{ field: 'messages', value: { metadata: meta, contacts: [{ profile: { name: 'Eve' }, wa_id: from }], messages: [{ from, id: `wamid.after${from}`, timestamp: now, type: 'text', text: { body: 'behind an unknown status' } }] } }] },
    ] };

    // Act
    const failures = await h.runWorker([JSON.stringify(body)]);

    // Assess: asked again for the status, and the message is in already
    expect(failures).toBe(1);
    expect(h.events(t.businessId).filter((e) => e.event === 'message.received').map((e) => e.data.messages[0].text.body)).toEqual(['behind an unknown status']);
  });

  it('drops a fresh status still unknown at the queue\'s last receive (a message this service never sent), not into the dead-letter queue', async () => {
    const t = await h.newTenant();
    const body = JSON.stringify({ object: 'whatsapp_business_account', entry: [{ id: 'w', changes: [{ field: 'messages', value: { metadata: { phone_number_id: t.phoneNumberId }, statuses: [{ id: 'wamid.elsewhere', status: 'read', timestamp: String(Math.floor(Date.now() / 1000)) }] } }] }] });
    const { workers } = await import('#shared/routes.ts');
    const maxReceiveCount = workers.find((w) => w.queue === 'upstream-events')!.maxReceiveCount;
    expect(await h.runWorker([body], maxReceiveCount - 1)).toBe(1);
    expect(await h.runWorker([body], maxReceiveCount)).toBe(0);
  });

  it('drops the parts of a body that are not Meta\'s shape or could never be stored, and stores the rest (no receive would make them processable)', async () => {
    // Prepare: a valid message beside a change whose lists are objects, null items and a status without an id.
    const t = await h.newTenant();
    const from = randomPhone().slice(1);
    const meta = { phone_number_id: t.phoneNumberId };
    const valid = { field: 'messages', value: { metadata: meta, contacts: [{ profile: { name: 'Ok' }, wa_id: from }], messages: [{ from, id: `wamid.ok${from}`, timestamp: String(Math.floor(Date.now() / 1000)), type: 'text', text: { body: 'still here' } }] } };
    const now = String(Math.floor(Date.now() / 1000));
    // Messages no Meta webhook carries, which no table could hold: a sender of 10,000 digits, a user id or wamid of
    // 10,000 characters, a text of a million.
    const unstorable = [
      { from: '9'.repeat(10_000), id: `wamid.long-from${from}`, timestamp: now, type: 'text', text: { body: 'x' } },
      { from_user_id: `US.${'1'.repeat(10_000)}`, id: `wamid.long-user${from}`, timestamp: now, type: 'text', text: { body: 'x' } },
      { from, id: `wamid.${'w'.repeat(10_000)}`, timestamp: now, type: 'text', text: { body: 'x' } },
      { from, id: `wamid.huge${from}`, timestamp: now, type: 'text', text: { body: 'x'.repeat(1_000_000) } },
    ];
    const bodies = [
      { object: 'whatsapp_business_account', entry: [{ id: 'w', changes: [{ field: 'messages', value: { metadata: meta, messages: unstorable } }] }] },
      { object: 'whatsapp_business_account', entry: { id: 'not a list' } },
      { object: 'whatsapp_business_account', entry: [{ id: 'w', changes: { field: 'messages' } }] },
      { object: 'whatsapp_business_account', entry: [null, { id: 'w', changes: [null, { field: 'messages', value: { metadata: meta, messages: { a: 1 }, statuses: 'x' } }] }] },
      { object: 'whatsapp_business_account', entry: [{ id: 'w', changes: [{ field: 'messages', value: { metadata: meta, messages: [null, 7], statuses: [null, { status: 'sent', timestamp: '1' }] } }, valid] }] },
    ];

    // Act
    const failures = await h.runWorker(bodies.map((b) => JSON.stringify(b)));

    // Assess
    expect(failures).toBe(0);
    const received = h.events(t.businessId).filter((e) => e.event === 'message.received');
    expect(received.map((e) => e.data.messages[0].text.body)).toEqual(['still here']);
  });
});

describe('customers\' marketing preferences (user_preferences)', () => {
  it('opts a contact out on "stop" and back in on "resume", with contact.updated once each; a number without a contact changes nothing', async () => {
    // Prepare: a customer who wrote in (their contact exists), as pywa's user_marketing_preferences.json reports them.
    const t = await h.newTenant();
    const from = randomPhone();
    await h.inbound(t.phoneNumberId, from);
    expect(await h.drain()).toBe(0);
    const preference = (value: string, waId = from.slice(1)) => JSON.stringify({ object: 'whatsapp_business_account', entry: [{ id: 'w', changes: [{ field: 'user_preferences', value: {
      messaging_product: 'whatsapp', metadata: { phone_number_id: t.phoneNumberId }, contacts: [{ profile: { name: 'Test Name' }, wa_id: waId }],
      user_preferences: [{ wa_id: waId, detail: `User requested to ${value} marketing messages`, category: 'marketing_messages', value, timestamp: Math.floor(Date.now() / 1000) }],
    } }] }] });
    const contact = async () => (await h.invoke('GET /contacts/v1', { apiKey: t.apiKey })).body.contacts as { phone_number: string; opted_out: boolean }[];
    const updates = () => h.events(t.businessId).filter((e) => e.event === 'contact.updated');

    // Act + Assess
    expect(await h.runWorker([preference('stop')])).toBe(0);
    expect((await contact()).map((c) => [c.phone_number, c.opted_out])).toEqual([[from, true]]);
    expect(await h.runWorker([preference('stop')])).toBe(0);
    expect(updates()).toHaveLength(1);
    expect(await h.runWorker([preference('resume')])).toBe(0);
    expect((await contact()).map((c) => c.opted_out)).toEqual([false]);
    expect(updates()).toHaveLength(2);
    expect(await h.runWorker([preference('stop', '5215500000000')])).toBe(0);
    expect((await contact())).toHaveLength(1);
  });
});

describe('the sender\'s contacts entry', () => {
  it('takes a change\'s lone contacts entry as the sender\'s, whatever its wa_id says, as pywa and netflie read it (netflie\'s samples: wa_id "WHATSAPP_ID")', async () => {
    // Prepare
    const t = await h.newTenant();
    const from = randomPhone().slice(1);
    const entry = { profile: { name: 'Nombre de muestra' }, wa_id: 'WHATSAPP_ID' };
    const body = JSON.stringify({ object: 'whatsapp_business_account', entry: [{ id: 'w', changes: [{ field: 'messages', value: {
      metadata: { phone_number_id: t.phoneNumberId }, contacts: [entry],
      messages: [{ from, id: `wamid.lone${from}`, timestamp: String(Math.floor(Date.now() / 1000)), type: 'text', text: { body: 'Hola' } }],
    } }] }] });

    // Act
    expect(await h.runWorker([body])).toBe(0);

    // Assess
    const received = h.events(t.businessId).filter((e) => e.event === 'message.received');
    expect(received.map((e) => e.data.contacts)).toEqual([[entry]]);
    const contact = (await h.invoke('GET /contacts/v1', { apiKey: t.apiKey })).body.contacts[0];
    expect(contact).toMatchObject({ phone_number: `+${from}`, name: 'Nombre de muestra' });
  });
});

describe('inbound messages with numbers past 2^53 or outside the table\'s range', () => {
  it('stores the message and emits message.received with the numbers as JSON reads them, and those the table cannot hold as their JSON text (it was retried until the dead-letter queue)', async () => {
    // Prepare: fields Meta may add carry numbers of any size (here beside a location's own coordinates).
    const t = await h.newTenant();
    const from = randomPhone().slice(1);
    const now = String(Math.floor(Date.now() / 1000));
    const body = `{"object":"whatsapp_business_account","entry":[{"id":"w","changes":[{"field":"messages","value":{"metadata":{"phone_number_id":"${t.phoneNumberId}"},` +
      `"contacts":[{"profile":{"name":"Big"},"wa_id":"${from}"}],"messages":[{"from":"${from}","id":"wamid.big${from}","timestamp":"${now}","type":"location",` +
      `"location":{"latitude":19.0,"longitude":-99.1,"name":"N\\/A","big":1e21,"huge":12345678901234567890,"small":1E-7,"past":-1e300,"tiny":1e-200}}]}}]}]}`;

    // Act
    const failures = await h.runWorker([body]);

    // Assess
    expect(failures).toBe(0);
    const received = h.events(t.businessId).filter((e) => e.event === 'message.received');
    expect(received).toHaveLength(1);
    expect(received[0].data.messages[0].location).toEqual({ ...JSON.parse(body).entry[0].changes[0].value.messages[0].location, past: '-1e+300', tiny: '1e-200' });
    const conversation = (await h.invoke('GET /conversations/v1', { apiKey: t.apiKey })).body.conversations[0];
    const messages = await h.invoke('GET /conversations/v1/{id}/messages', { apiKey: t.apiKey, params: { id: conversation.id } });
    expect(messages.status).toBe(200);
    expect(messages.body.messages.map((m: any) => m.content?.big)).toEqual([1e21]);
  });
});

describe('conversation reads', () => {
  it('answers 403 for another business\'s conversation (the contract: it belongs to another account) and 400 for a forged cursor; empty query values are the defaults', async () => {
    const t = await h.newTenant();
    const other = await h.newTenant();
    const from = randomPhone();
    await h.inbound(other.phoneNumberId, from);
    await h.drain();
    const theirs = (await h.invoke('GET /conversations/v1', { apiKey: other.apiKey })).body.conversations[0];
    expect((await h.invoke('GET /conversations/v1/{id}', { apiKey: t.apiKey, params: { id: theirs.id } })).status).toBe(403);
    expect((await h.invoke('GET /conversations/v1/{id}/messages', { apiKey: t.apiKey, params: { id: theirs.id } })).status).toBe(403);

    const forged = Buffer.from(JSON.stringify({ pk: `B#${other.businessId}`, sk: `CONV#${theirs.id}`, gsi1pk: `B#${other.businessId}#CONVS`, gsi1sk: 'z' })).toString('base64url');
    const res = await h.invoke('GET /conversations/v1', { apiKey: t.apiKey, query: { cursor: forged } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'invalid_cursor' });
    expect((await h.invoke('GET /conversations/v1', { apiKey: t.apiKey, query: { cursor: 'garbage' } })).status).toBe(400);
    expect((await h.invoke('GET /conversations/v1', { apiKey: t.apiKey, query: { limit: '101' } })).status).toBe(400);
    // Empty values are the defaults (clients that build URLs with every parameter send them).
    const defaults = await h.invoke('GET /conversations/v1', { apiKey: t.apiKey, query: { limit: '', cursor: '' } });
    expect(defaults.status).toBe(200);
    expect(defaults.body.conversations).toEqual([]);
  });
});
