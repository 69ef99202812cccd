/**
 * What the Cloud API sends reaches the service's events unchanged: every field of an incoming message (context,
 * referral, interactive replies, business-scoped user ids, username) in `message.received`, and every field of a
 * status (pricing, conversation, errors[].error_data, the client's biz_opaque_callback_data) in the status events.
 */
import { signatureOf } from '#shared/upstream/signature.ts';
import { TEST_UPSTREAM } from '../../support/upstream-secret.ts';
import { startHarness, randomPhone, type Harness } from './harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h?.stop());

/** Posts a Cloud API notification signed with the app secret, as Meta would, and runs the worker on it. */
async function webhook(phoneNumberId: string, value: Record<string, unknown>) {
  const raw = JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [{ id: 'waba', changes: [{ field: 'messages', value: { messaging_product: 'whatsapp', metadata: { display_phone_number: '15550001234', phone_number_id: phoneNumberId }, ...value } }] }],
  });
  const res = await h.invoke('POST /webhooks/upstream', { rawBody: raw, headers: { 'x-hub-signature-256': signatureOf(raw, TEST_UPSTREAM.appSecret) } });
  expect(res.status).toBe(200);
  expect(await h.drain()).toBe(0);
}

describe('inbound webhooks reach message.received unchanged', () => {
  it('keeps context, referral, an interactive reply, user_id / parent_user_id and username', async () => {
    // Prepare
    const t = await h.newTenant();
    const from = randomPhone().slice(1);
    const contacts = [{ profile: { name: 'Ana', username: 'ana.ruiz' }, wa_id: from, user_id: 'US.13491208655302741918', parent_user_id: 'US.ENT.11815799212886844830' }];
    const message = {
      from, from_user_id: 'US.13491208655302741918', id: `wamid.${from}`, timestamp: String(Math.floor(Date.now() / 1000)), type: 'interactive',
      context: { from: '15550001234', id: 'wamid.previous' },
      referral: { source_url: 'https://fb.me/ad', source_id: '120', source_type: 'ad', headline: 'Promo', body: 'Body', media_type: 'image', image_url: 'https://x/y.jpg', ctwa_clid: 'ARA' },
      interactive: { type: 'list_reply', list_reply: { id: 'centro', title: 'Centro', description: 'Zócalo' } },
    };

    // Act
    await webhook(t.phoneNumberId, { contacts, messages: [message] });

    // Assess
    const received = h.events(t.businessId).find((e) => e.event === 'message.received');
    expect(received?.data.messages).toEqual([message]);
    expect(received?.data.contacts).toEqual(contacts);
    // The stored message says what it replies to, as Meta said it.
    const stored = await h.invoke('GET /messages/v1/{id}', { apiKey: t.apiKey, params: { id: received!.data.message_id } });
    expect(stored.body.message).toMatchObject({ direction: 'inbound', context: { from: '15550001234', id: 'wamid.previous' } });
  });

  it.each(['__proto__', 'constructor', 'prototype'])('stores and reports a message that carries a key named %s, without that key', async (name) => {
    // Prepare: the key on the message, in its context and in its text (raw JSON: an object literal would not keep it)
    const t = await h.newTenant();
    const from = randomPhone().slice(1);
    const key = JSON.stringify(name);
    const message = `{"from":"${from}","id":"wamid.p${from}","timestamp":"${Math.floor(Date.now() / 1000)}","type":"text",` +
      `"text":{"body":"hola",${key}:"x"},"context":{${key}:{"polluted":1},"id":"wamid.previous"},${key}:{"prototype":{"polluted":1}}}`;
    const raw = `{"object":"whatsapp_business_account","entry":[{"id":"waba","changes":[{"field":"messages","value":{"messaging_product":"whatsapp",` +
      `"metadata":{"phone_number_id":"${t.phoneNumberId}"},"contacts":[{"wa_id":"${from}"}],"messages":[${message}]}}]}]}`;

    // Act
    const res = await h.invoke('POST /webhooks/upstream', { rawBody: raw, headers: { 'x-hub-signature-256': signatureOf(raw, TEST_UPSTREAM.appSecret) } });

    // Assess: no worker failure (it went to the dead-letter queue), the message kept whole but for those keys
    expect(res.status).toBe(200);
    expect(await h.drain()).toBe(0);
    const received = h.events(t.businessId).filter((e) => e.event === 'message.received');
    expect(received.map((e) => e.data.messages)).toEqual([[{ from, id: `wamid.p${from}`, timestamp: expect.any(String), type: 'text', text: { body: 'hola' }, context: { id: 'wamid.previous' } }]]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it.each([
    ['in the year 2100', '4102444800'],
    ['in milliseconds', String(Date.now())],
    ['past the last date there is', '1e20'],
  ])('takes a message timestamp %s as the time it came (it held the 24-hour window open for ever, or failed the worker)', async (_case, timestamp) => {
    // Prepare
    const t = await h.newTenant();
    const from = randomPhone().slice(1);
    const before = Date.now();
    // Act
    await webhook(t.phoneNumberId, { contacts: [{ wa_id: from }], messages: [{ from, id: `wamid.t${from}`, timestamp, type: 'text', text: { body: 'hola' } }] });
    // Assess
    const received = h.events(t.businessId).find((e) => e.event === 'message.received')!.data;
    expect(received.messages[0].timestamp).toBe(timestamp);
    const conversation = (await h.invoke('GET /conversations/v1/{id}', { apiKey: t.apiKey, params: { id: received.conversation_id } })).body.conversation;
    const windowEnds = Date.parse(conversation.windowExpiresAt ?? conversation.window_expires_at);
    expect(windowEnds).toBeGreaterThanOrEqual(before + 24 * 3600_000 - 1000);
    expect(windowEnds).toBeLessThanOrEqual(Date.now() + 24 * 3600_000);
  });

  it('keeps an order and a system message', async () => {
    const t = await h.newTenant();
    const from = randomPhone().slice(1);
    const order = { from, id: `wamid.o${from}`, timestamp: '1700000000', type: 'order', order: { catalog_id: '1', text: 'x', product_items: [{ product_retailer_id: 'a', quantity: 2, item_price: 10, currency: 'USD' }] } };
    const system = { from, id: `wamid.s${from}`, timestamp: '1700000001', type: 'system', system: { body: 'User changed number', wa_id: '1555', type: 'user_changed_number' } };

    await webhook(t.phoneNumberId, { contacts: [{ profile: { name: 'B' }, wa_id: from }], messages: [order, system] });

    const messages = h.events(t.businessId).filter((e) => e.event === 'message.received').map((e) => e.data.messages[0]);
    expect(messages).toEqual([order, system]);
  });

  it('lists the messages of one second in the order they came, as Meta timestamps them in whole seconds', async () => {
    const t = await h.newTenant();
    const from = randomPhone().slice(1);
    const second = String(Math.floor(Date.now() / 1000));
    const messages = ['uno', 'dos', 'tres', 'cuatro'].map((body) => ({ from, id: `wamid.${body}${from}`, timestamp: second, type: 'text', text: { body } }));

    await webhook(t.phoneNumberId, { contacts: [{ profile: { name: 'O' }, wa_id: from }], messages });

    const conversationId = h.events(t.businessId).find((e) => e.event === 'message.received')!.data.conversation_id;
    const listed = await h.invoke('GET /conversations/v1/{id}/messages', { apiKey: t.apiKey, params: { id: conversationId } });
    // Newest first.
    expect(listed.body.messages.map((m: any) => m.content.body)).toEqual(['cuatro', 'tres', 'dos', 'uno']);
  });

  it('takes the messages of one notification at the moment it came in, however long the worker takes over them, so their order holds across a second', async () => {
    // Prepare: a notification of four messages of second T that came in at T.900, which the worker reaches in the next second
    const t = await h.newTenant();
    const from = randomPhone().slice(1);
    const second = Math.floor(Date.now() / 1000) - 1;
    const messages = ['uno', 'dos', 'tres', 'cuatro'].map((body) => ({ from, id: `wamid.late${body}${from}`, timestamp: String(second), type: 'text', text: { body } }));
    const raw = JSON.stringify({ object: 'whatsapp_business_account', entry: [{ id: 'waba', changes: [{ field: 'messages', value: { messaging_product: 'whatsapp', metadata: { display_phone_number: '15550001234', phone_number_id: t.phoneNumberId }, contacts: [{ profile: { name: 'O' }, wa_id: from }], messages } }] }] });
    expect((await h.invoke('POST /webhooks/upstream', { rawBody: raw, headers: { 'x-hub-signature-256': signatureOf(raw, TEST_UPSTREAM.appSecret) } })).status).toBe(200);
    const queued = h.takeQueue('upstream-events');

    // Act
    expect(await h.runWorker(queued.map((q) => ({ body: q.body, sentAt: second * 1000 + 900 })))).toBe(0);

    // Assess: every one at T.900, in the order they came (newest first)
    const conversationId = h.events(t.businessId).find((e) => e.event === 'message.received')!.data.conversation_id;
    const listed = (await h.invoke('GET /conversations/v1/{id}/messages', { apiKey: t.apiKey, params: { id: conversationId } })).body.messages;
    expect(listed.map((m: any) => [m.content.body, m.createdAt])).toEqual(['cuatro', 'tres', 'dos', 'uno'].map((body) => [body, new Date(second * 1000 + 900).toISOString()]));
  });

  it("keeps the change's own errors beside its message (pywa's interactive message with an error)", async () => {
    const t = await h.newTenant();
    const from = randomPhone().slice(1);
    const message = { context: { from: '15550001234', id: 'wamid.previous' }, from, id: `wamid.e${from}`, timestamp: '1700000000', type: 'interactive' };
    const errors = [{ code: 131000, title: 'Something went wrong', message: 'Something went wrong', error_data: { details: 'Unsupported webhook payload' } }];

    await webhook(t.phoneNumberId, { contacts: [{ profile: { name: 'E' }, wa_id: from }], messages: [message], errors });

    const received = h.events(t.businessId).find((e) => e.event === 'message.received');
    expect(received?.data).toMatchObject({ messages: [message], errors });
  });

  it("takes the sender from the change's only contact entry when the message names none (netflie's user-id-only payload)", async () => {
    const t = await h.newTenant();
    const userId = `US.${Date.now()}${Math.floor(Math.random() * 1e6)}`;
    const contacts = [{ profile: { name: 'NAME' }, user_id: userId }];
    const message = { id: `wamid.n${userId}`, timestamp: String(Math.floor(Date.now() / 1000)), text: { body: 'MESSAGE_BODY' }, type: 'text' };

    await webhook(t.phoneNumberId, { contacts, messages: [message] });

    const received = h.events(t.businessId).find((e) => e.event === 'message.received');
    expect(received?.data).toMatchObject({ messages: [message], contacts });
    const contact = await h.invoke('GET /contacts/v1/{id}', { apiKey: t.apiKey, params: { id: received!.data.contact_id } });
    expect(contact.body.contact).toEqual(expect.objectContaining({ phone_number: null, whatsapp_user_id: userId, name: 'NAME' }));
  });

  it("gives each message of a batched change its own sender's contact entry, and none Meta did not send", async () => {
    // Prepare: two senders in one change, and Meta's system message example (user_changed_number, no contacts)
    const t = await h.newTenant();
    const [a, b] = [randomPhone().slice(1), randomPhone().slice(1)];
    const contacts = [{ profile: { name: 'A' }, wa_id: a }, { profile: { name: 'B' }, wa_id: b }];
    const text = (from: string) => ({ from, id: `wamid.t${from}`, timestamp: String(Math.floor(Date.now() / 1000)), type: 'text', text: { body: `from ${from}` } });
    const system = { from: a, id: `wamid.s${a}`, timestamp: String(Math.floor(Date.now() / 1000)), type: 'system', system: { body: 'NAME changed from 1 to 2', new_wa_id: '16505551234', type: 'user_changed_number' } };

    // Act
    await webhook(t.phoneNumberId, { contacts, messages: [text(a), text(b)] });
    await webhook(t.phoneNumberId, { messages: [system] });

    // Assess
    const received = h.events(t.businessId).filter((e) => e.event === 'message.received').map((e) => e.data);
    expect(received.map((d) => [d.messages[0].id, d.contacts])).toEqual([
      [`wamid.t${a}`, [contacts[0]]],
      [`wamid.t${b}`, [contacts[1]]],
      [`wamid.s${a}`, undefined],
    ]);
  });
});

describe('a body larger than a queue message (Meta sends up to 3 MB)', () => {
  it('is acknowledged and every message and status in it is processed', async () => {
    // Prepare: a sent message, then 1.5 MB of one change: an incoming message and 300 statuses of 5 KB each
    const { t, to } = await h.openChat();
    const wamid = (await h.send(t.apiKey, { to, content: 'hola' })).body.messages[0].wamid;
    const from = randomPhone().slice(1);
    const now = String(Math.floor(Date.now() / 1000));
    const statuses = Array.from({ length: 300 }, (_, i) => ({ id: wamid, status: i === 299 ? 'read' : 'delivered', timestamp: now, recipient_id: to.slice(1), padding: 'x'.repeat(5000) }));
    const raw = JSON.stringify({ object: 'whatsapp_business_account', entry: [{ id: 'waba', changes: [{ field: 'messages', value: {
      messaging_product: 'whatsapp', metadata: { display_phone_number: '15550001234', phone_number_id: t.phoneNumberId },
      contacts: [{ profile: { name: 'Big' }, wa_id: from }],
      messages: [{ from, id: `wamid.big${from}`, timestamp: now, type: 'text', text: { body: 'in a big body' } }],
      statuses,
    } }] }] });
    expect(Buffer.byteLength(raw)).toBeGreaterThan(1_048_576);

    // Act
    const res = await h.invoke('POST /webhooks/upstream', { rawBody: raw, headers: { 'x-hub-signature-256': signatureOf(raw, TEST_UPSTREAM.appSecret) } });
    const failures = await h.drain();

    // Assess
    expect(res.status).toBe(200);
    expect(failures).toBe(0);
    const received = h.events(t.businessId).filter((e) => e.event === 'message.received').map((e) => e.data);
    expect(received.at(-1)).toMatchObject({ messages: [{ text: { body: 'in a big body' } }], contacts: [{ wa_id: from }] });
    expect(h.events(t.businessId).filter((e) => ['message.delivered', 'message.read'].includes(e.event)).map((e) => e.event)).toEqual(['message.delivered', 'message.read']);
  });
});

describe('a customer who writes by username, without a number', () => {
  it('is stored: one contact known by their user id, one conversation, message.received unchanged; deleting the contact frees the user id', async () => {
    // Prepare: Meta's shape for a username-only sender (no wa_id, no from)
    const t = await h.newTenant();
    const userId = `US.${Date.now()}${Math.floor(Math.random() * 1e6)}`;
    const contacts = [{ profile: { name: 'Ana', username: 'ana.ruiz' }, user_id: userId }];
    const now = Math.floor(Date.now() / 1000);
    const message = (n: number) => ({ from_user_id: userId, id: `wamid.u${n}.${userId}`, timestamp: String(now + n), type: 'text', text: { body: `hola ${n}` } });

    // Act
    await webhook(t.phoneNumberId, { contacts, messages: [message(1)] });
    await webhook(t.phoneNumberId, { contacts, messages: [message(2)] });

    // Assess
    const received = h.events(t.businessId).filter((e) => e.event === 'message.received');
    expect(received.map((e) => e.data.messages)).toEqual([[message(1)], [message(2)]]);
    expect(received.map((e) => e.data.contacts)).toEqual([contacts, contacts]);
    const [first, second] = received.map((e) => e.data);
    expect(second.contact_id).toBe(first.contact_id);
    expect(second.conversation_id).toBe(first.conversation_id);
    const contact = await h.invoke('GET /contacts/v1/{id}', { apiKey: t.apiKey, params: { id: first.contact_id } });
    expect(contact.status).toBe(200);
    expect(contact.body.contact).toEqual(expect.objectContaining({ id: first.contact_id, phone_number: null, whatsapp_user_id: userId, name: 'Ana', origin: 'inbound' }));
    const history = await h.invoke('GET /conversations/v1/{id}/messages', { apiKey: t.apiKey, params: { id: first.conversation_id } });
    expect(history.status).toBe(200);
    expect(history.body.messages.map((m: any) => m.direction)).toEqual(['inbound', 'inbound']);

    // A deleted contact frees the user id: the customer's next message makes a new contact.
    expect((await h.invoke('DELETE /contacts/v1/{id}', { apiKey: t.apiKey, params: { id: first.contact_id } })).status).toBe(200);
    await webhook(t.phoneNumberId, { contacts, messages: [message(3)] });
    const third = h.events(t.businessId).filter((e) => e.event === 'message.received').at(-1)!.data;
    expect(third.messages).toEqual([message(3)]);
    expect(third.contact_id).not.toBe(first.contact_id);
  });

  it('is one contact and one conversation whether a message names them by number and user id, or by user id alone', async () => {
    // Prepare: Meta sends the user id beside the number (pywa's text message), then the same customer by username only
    const t = await h.newTenant();
    const from = randomPhone().slice(1);
    const userId = `US.${Date.now()}${Math.floor(Math.random() * 1e6)}`;
    const now = Math.floor(Date.now() / 1000);
    const withNumber = { from, id: `wamid.n.${userId}`, timestamp: String(now), type: 'text', text: { body: 'hola' } };
    const byUsername = { from_user_id: userId, id: `wamid.u.${userId}`, timestamp: String(now + 1), type: 'text', text: { body: 'otra vez' } };

    // Act
    await webhook(t.phoneNumberId, { contacts: [{ profile: { name: 'Ana' }, wa_id: from, user_id: userId }], messages: [withNumber] });
    await webhook(t.phoneNumberId, { contacts: [{ profile: { name: 'Ana', username: 'ana.ruiz' }, user_id: userId }], messages: [byUsername] });

    // Assess
    const [first, second] = h.events(t.businessId).filter((e) => e.event === 'message.received').map((e) => e.data);
    expect(second.contact_id).toBe(first.contact_id);
    expect(second.conversation_id).toBe(first.conversation_id);
    expect(h.events(t.businessId).filter((e) => e.event === 'contact.created')).toHaveLength(1);
    const contact = (await h.invoke('GET /contacts/v1/{id}', { apiKey: t.apiKey, params: { id: first.contact_id } })).body.contact;
    expect(contact).toMatchObject({ phone_number: `+${from}`, whatsapp_user_id: userId });
  });

  it('keeps its contact when it later writes with its number: the contact and its open conversation take the number (contact.updated)', async () => {
    const t = await h.newTenant();
    const from = randomPhone().slice(1);
    const userId = `US.${Date.now()}${Math.floor(Math.random() * 1e6)}`;
    const now = Math.floor(Date.now() / 1000);

    await webhook(t.phoneNumberId, { contacts: [{ profile: { username: 'ana.ruiz' }, user_id: userId }], messages: [{ from_user_id: userId, id: `wamid.u.${userId}`, timestamp: String(now), type: 'text', text: { body: 'hola' } }] });
    await webhook(t.phoneNumberId, { contacts: [{ profile: { name: 'Ana' }, wa_id: from, user_id: userId }], messages: [{ from, from_user_id: userId, id: `wamid.n.${userId}`, timestamp: String(now + 1), type: 'text', text: { body: 'mi número' } }] });

    const [first, second] = h.events(t.businessId).filter((e) => e.event === 'message.received').map((e) => e.data);
    expect(second.contact_id).toBe(first.contact_id);
    expect(second.conversation_id).toBe(first.conversation_id);
    expect(h.events(t.businessId).filter((e) => e.event === 'contact.updated').map((e) => e.data.changed_fields)).toEqual([['phone_number']]);
    const contact = (await h.invoke('GET /contacts/v1/{id}', { apiKey: t.apiKey, params: { id: first.contact_id } })).body.contact;
    expect(contact).toMatchObject({ phone_number: `+${from}`, whatsapp_user_id: userId });
    // The conversation begun by username now has the number to answer on (the AI replies by number).
    const conversation = await h.invoke('GET /conversations/v1/{id}', { apiKey: t.apiKey, params: { id: first.conversation_id } });
    expect(conversation.body.conversation).toMatchObject({ id: first.conversation_id, phoneNumber: `+${from}` });
    // The number now finds this contact, and its open conversation, for a send (which the upstream stand-in, that
    // never saw this customer write, then refuses: the message is recorded in that conversation all the same).
    const sent = await h.invoke('POST /messages/v1', { apiKey: t.apiKey, body: { to: `+${from}`, content: 'gracias' } });
    expect(sent.body).toMatchObject({ data: { conversationId: first.conversation_id } });
  });
});

describe('status webhooks reach the status events unchanged', () => {
  it('carries pricing, conversation and the client\'s biz_opaque_callback_data in message.delivered', async () => {
    // Prepare
    const { t, to } = await h.openChat();
    const sent = await h.send(t.apiKey, { messaging_product: 'whatsapp', to, type: 'text', text: { body: 'hola' }, biz_opaque_callback_data: 'order-1042' });
    const wamid = sent.body.messages[0].wamid;

    // Act
    await h.status(wamid, 'delivered');
    expect(await h.drain()).toBe(0);

    // Assess
    const messageSent = h.events(t.businessId).find((e) => e.event === 'message.sent');
    expect(messageSent?.data.biz_opaque_callback_data).toBe('order-1042');
    const delivered = h.events(t.businessId).find((e) => e.event === 'message.delivered');
    expect(delivered?.data.biz_opaque_callback_data).toBe('order-1042');
    expect(delivered?.data.statuses).toEqual([expect.objectContaining({
      id: wamid, status: 'delivered', biz_opaque_callback_data: 'order-1042',
      conversation: expect.objectContaining({ id: expect.any(String), origin: { type: 'service' } }),
      pricing: expect.objectContaining({ pricing_model: 'PMP', category: 'service' }),
    })]);
  });

  it('carries no biz_opaque_callback_data in the status events of a send that set none, not even in statuses (the service\'s own id passed upstream stays its own)', async () => {
    const { t, to } = await h.openChat();
    const wamid = (await h.send(t.apiKey, { to, content: 'hola' })).body.messages[0].wamid;

    await h.status(wamid, 'delivered');
    expect(await h.drain()).toBe(0);

    const delivered = h.events(t.businessId).find((e) => e.event === 'message.delivered');
    expect(delivered?.data.statuses).toEqual([expect.objectContaining({ id: wamid, status: 'delivered' })]);
    expect(delivered?.data).not.toHaveProperty('biz_opaque_callback_data');
    expect(delivered?.data.statuses[0]).not.toHaveProperty('biz_opaque_callback_data');
  });

  it("carries the client's biz_opaque_callback_data in the message.failed of a send refused upstream, and none of its own", async () => {
    // Prepare: no inbound message, so a free-form send fails with 131047
    const t = await h.newTenant();

    // Act
    const refused = await h.send(t.apiKey, { to: randomPhone(), content: 'no window', biz_opaque_callback_data: 'cb-fail' });
    const plain = await h.send(t.apiKey, { to: randomPhone(), content: 'no window either' });

    // Assess
    expect([refused.status, plain.status]).toEqual([400, 400]);
    const failed = h.events(t.businessId).filter((e) => e.event === 'message.failed');
    expect(failed.find((e) => e.data.message_id === refused.body.data.id)?.data.biz_opaque_callback_data).toBe('cb-fail');
    expect(failed.find((e) => e.data.message_id === plain.body.data.id)?.data).not.toHaveProperty('biz_opaque_callback_data');
  });

  it('settles as sent a send stored failed that the upstream took after all (its status names it); a retry then sends nothing', async () => {
    // Prepare: the upstream answers no attempt, so the send is stored failed without a wamid
    const { t, to } = await h.openChat();
    await h.sandboxCall('POST', '/__sandbox/faults', { kind: 'error500', count: 3, target: 'messages' });
    const first = await h.send(t.apiKey, { to, content: 'did it go?' });
    expect([first.status, first.body.data.status]).toEqual([502, 'failed']);
    const id = first.body.data.id;
    const message = async () => (await h.invoke('GET /messages/v1/{id}', { apiKey: t.apiKey, params: { id } })).body.message;

    // Act: Meta's status of the message it did take, naming it by the callback data the send passed
    await webhook(t.phoneNumberId, { statuses: [{ id: 'wamid.late-accepted', status: 'delivered', timestamp: String(Math.floor(Date.now() / 1000)), recipient_id: to.slice(1), biz_opaque_callback_data: id }] });
    const retry = await h.invoke('POST /messages/v1/{id}/retry', { apiKey: t.apiKey, params: { id } });

    // Assess
    expect(await message()).toMatchObject({ status: 'delivered', wamid: 'wamid.late-accepted', error: null });
    expect(h.events(t.businessId).filter((e) => e.data.message_id === id).map((e) => e.event)).toEqual(['message.failed', 'message.sent', 'message.delivered']);
    expect([retry.status, retry.body.error]).toEqual([400, 'invalid_state']);
    expect((await h.sent(to)).filter((p) => p.text?.body === 'did it go?')).toEqual([]);
  });

  it('carries errors[].error_data of a failed status in message.failed', async () => {
    const { t, to } = await h.openChat();
    const wamid = (await h.send(t.apiKey, { to, content: 'hola' })).body.messages[0].wamid;

    await h.status(wamid, 'failed', { code: 131026 });
    expect(await h.drain()).toBe(0);

    const failed = h.events(t.businessId).find((e) => e.event === 'message.failed' && e.data.wamid === wamid);
    expect(failed?.data.statuses[0].errors).toEqual([{ code: 131026, title: expect.any(String), message: expect.any(String), error_data: { details: expect.any(String) } }]);
    // The contract's error: `details` an object, as a send's 132000 has it, Meta's words under `upstream`.
    expect(failed?.data.error).toMatchObject({ code: '131026', error: 'user_blocked', details: { upstream: failed?.data.statuses[0].errors[0].error_data.details } });
  });

  it('names the template and language in a 132000 failure that arrives by status webhook, as a send that fails at once does', async () => {
    const { t, to } = await h.openChat();
    const wamid = (await h.send(t.apiKey, { to, type: 'template', templateName: 'hello_world', language: 'en_US' })).body.messages[0].wamid;

    await h.status(wamid, 'failed', { code: 132000 });
    expect(await h.drain()).toBe(0);

    const failed = h.events(t.businessId).find((e) => e.event === 'message.failed' && e.data.wamid === wamid);
    expect(failed?.data.error).toMatchObject({ code: '132000', error: 'template_not_found', details: { template_name: 'hello_world', language: 'en_US', upstream: expect.any(String) } });
  });
});
