/**
 * The whole AI loop through the local stack: the sandbox's customer writes, the upstream webhook reaches the
 * service, the AI worker asks the sandbox's deterministic model and the reply goes out through the send path.
 */
import { startMessagingStack, randomPhone, type MessagingStack, type Tenant } from '../messages/stack.ts';
import { signatureOf } from '#shared/upstream/signature.ts';
import { TEST_UPSTREAM } from '../../support/upstream-secret.ts';

let m: MessagingStack;
beforeAll(async () => {
  m = await startMessagingStack();
}, 60_000);
afterAll(() => m?.stop());

const aiReplies = async (to: string) => (await m.sent(to)).filter((p: any) => p.type === 'text' && String(p.text?.body).startsWith('[AI]'));

/** A fresh business whose agent answers at once (no debounce window) unless a test says otherwise. */
async function tenant(debounceSeconds = 0): Promise<Tenant> {
  const t = await m.tenant();
  const res = await t.call('PATCH', '/agent/v1/settings', { debounceSeconds });
  expect(res.status).toBe(200);
  return t;
}

async function conversationOf(t: Tenant, phone: string): Promise<string> {
  const list = await t.call('GET', '/conversations/v1?limit=100');
  const found = list.body.conversations.find((c: any) => c.phoneNumber === phone);
  if (!found) throw new Error(`no conversation with ${phone}`);
  return found.id;
}

describe('the AI agent over the local stack', () => {
  it('answers an inbound message when all four conditions hold, as a message sent by the AI', async () => {
    // Prepare
    const t = await tenant();
    const from = randomPhone();

    // Act
    await t.inbound(from, 'Hola, ¿tienen envío a Monterrey?');

    // Assess
    const replies = await aiReplies(from);
    expect(replies).toHaveLength(1);
    expect(replies[0].text.body).toContain('Hola, ¿tienen envío a Monterrey?');
    const cid = await conversationOf(t, from);
    const messages = (await t.call('GET', `/conversations/v1/${cid}/messages`)).body.messages;
    expect(messages[0]).toMatchObject({ direction: 'outbound', sentBy: 'ai', status: 'sent' });
  });

  it.each([
    ['the global toggle is off', async (t: Tenant) => t.call('POST', '/agent/toggle', { enabled: false })],
    ['a global pause runs', async (t: Tenant) => t.call('POST', '/agent/v1/pause', { duration: 5 })],
    ['the conversation toggle is off', async (t: Tenant, cid: string) => t.call('PATCH', `/conversations/v1/${cid}/ai`, { aiEnabled: false })],
    ['a conversation pause runs', async (t: Tenant, cid: string) => t.call('POST', `/conversations/v1/${cid}/ai/pause`, { duration: 5 })],
  ])('stays silent when %s', async (_label, block) => {
    // Prepare: a conversation that already got its first answer
    const t = await tenant();
    const from = randomPhone();
    await t.inbound(from, 'first');
    const cid = await conversationOf(t, from);
    expect((await block(t, cid)).status).toBe(200);

    // Act
    await t.inbound(from, 'second');

    // Assess
    expect((await aiReplies(from)).map((r: any) => r.text.body)).toEqual([expect.stringContaining('"first"')]);
  });

  it('answers again by itself once a pause has ended', async () => {
    // Prepare: a conversation paused until two seconds from now (the API's shortest pause is a minute)
    const t = await tenant();
    const from = randomPhone();
    await t.inbound(from, 'first');
    const cid = await conversationOf(t, from);
    const { pauseConversationAi } = await import('#shared/ai/conversation-ai.ts');
    const until = Date.now() + 2000;
    await pauseConversationAi(t.businessId, cid, new Date(until).toISOString());
    await t.inbound(from, 'while paused');

    // Act
    await new Promise((r) => setTimeout(r, Math.max(0, until - Date.now()) + 50));
    await t.inbound(from, 'after the pause');

    // Assess
    const bodies = (await aiReplies(from)).map((r: any) => r.text.body);
    expect(bodies).toHaveLength(2);
    expect(bodies[1]).toContain('after the pause');
  });

  it('keeps answering after a person replies through the API, unless the business set a handoff pause', async () => {
    // Prepare
    const t = await tenant();
    const [plain, handedOff] = [randomPhone(), randomPhone()];
    await t.inbound(plain, 'hello');

    // Act: a human reply without an ai object (the contract pauses only with ai.pause)
    const human = await t.call('POST', '/messages/v1', { to: plain, content: 'Hi, this is Ana from the team.' });
    await t.inbound(plain, 'thanks Ana');
    // The business asks for a 5-minute pause after every human reply
    expect((await t.call('PATCH', '/agent/v1/settings', { handoffPauseMinutes: 5 })).status).toBe(200);
    await t.inbound(handedOff, 'hello');
    const handoff = await t.call('POST', '/messages/v1', { to: handedOff, content: 'Hi, this is Ana from the team.' });
    await t.inbound(handedOff, 'thanks Ana');

    // Assess
    expect([human.status, handoff.status]).toEqual([200, 200]);
    expect(await aiReplies(plain)).toHaveLength(2);
    expect((await t.call('GET', `/conversations/v1/${human.body.data.conversationId}`)).body.conversation.aiPausedUntil).toBeNull();
    expect(await aiReplies(handedOff)).toHaveLength(1);
    const conversation = (await t.call('GET', `/conversations/v1/${handoff.body.data.conversationId}`)).body.conversation;
    expect(Math.round((Date.parse(conversation.aiPausedUntil) - Date.now()) / 60_000)).toBe(5);
  });

  it('does not pause the agent for a send that carries its own ai control', async () => {
    const t = await tenant();
    const from = randomPhone();
    await t.inbound(from, 'hello');
    const sent = await t.call('POST', '/messages/v1', { to: from, content: 'An update for you', ai: { pause: false } });
    expect(sent.status).toBe(200);
    await t.inbound(from, 'ok');
    expect(await aiReplies(from)).toHaveLength(2);
  });

  it('ai.pause on a send pauses the agent for pauseDuration minutes, ai.disable turns it off for good', async () => {
    // Prepare
    const t = await tenant();
    const paused = randomPhone();
    const disabled = randomPhone();
    await t.inbound(paused, 'hello');
    await t.inbound(disabled, 'hello');

    // Act
    const p = await t.call('POST', '/messages/v1', { to: paused, content: 'Let me check', ai: { pause: true, pauseDuration: 10 } });
    const d = await t.call('POST', '/messages/v1', { to: disabled, content: 'A person takes it from here', ai: { disable: true } });
    await t.inbound(paused, 'ok');
    await t.inbound(disabled, 'ok');

    // Assess
    expect([p.status, d.status]).toEqual([200, 200]);
    expect(await aiReplies(paused)).toHaveLength(1);
    expect(await aiReplies(disabled)).toHaveLength(1);
    const pc = (await t.call('GET', `/conversations/v1/${p.body.data.conversationId}`)).body.conversation;
    const dc = (await t.call('GET', `/conversations/v1/${d.body.data.conversationId}`)).body.conversation;
    expect(Math.round((Date.parse(pc.aiPausedUntil) - Date.now()) / 60_000)).toBe(10);
    expect(dc.aiEnabled).toBe(false);
  });

  it('never replies twice when the queue redelivers the job', async () => {
    // Prepare
    const t = await tenant();
    const from = randomPhone();
    await t.inbound(from, 'just once please');
    const cid = await conversationOf(t, from);
    const inbound = (await t.call('GET', `/conversations/v1/${cid}/messages`)).body.messages.find((x: any) => x.direction === 'inbound');
    const job = JSON.stringify({ businessId: t.businessId, conversationId: cid, messageId: inbound.id, receivedAt: inbound.createdAt });

    // Act: the same job delivered again, twice at once
    await Promise.all([m.stack.queues.send('ai', job), m.stack.queues.send('ai', job)]);
    await m.stack.queues.idle();

    // Assess
    expect(await aiReplies(from)).toHaveLength(1);
  });

  it('gives several messages within the debounce window one answer', async () => {
    const t = await tenant(1);
    const from = randomPhone();
    for (const [i, text] of ['hi', 'I need help', 'with my order'].entries()) {
      await m.sandbox('POST', '/__sandbox/inbound', { from, text, phone_number_id: t.phoneNumberId, timestamp: Math.floor(Date.now() / 1000) + i });
    }
    await m.stack.queues.idle();
    const replies = await aiReplies(from);
    expect(replies).toHaveLength(1);
    expect(replies[0].text.body).toContain('with my order');
  });

  it("answers a burst by what came in last, whatever Meta's timestamps say: a message delivered late is in the answer", async () => {
    // Prepare: B (written now) comes in, then A, written 3 s earlier but delivered after B
    const t = await tenant(1);
    const from = randomPhone();
    const now = Math.floor(Date.now() / 1000);

    // Act
    await m.sandbox('POST', '/__sandbox/inbound', { from, text: 'second written B', phone_number_id: t.phoneNumberId, timestamp: now });
    await m.sandbox('POST', '/__sandbox/inbound', { from, text: 'first written A', phone_number_id: t.phoneNumberId, timestamp: now - 3 });
    await m.stack.queues.idle();

    // Assess: one answer, which has both
    const replies = await aiReplies(from);
    expect(replies).toHaveLength(1);
    expect(replies[0].text.body).toContain('first written A');
  });

  it('reads a burst in the order the customer wrote it, whatever order its webhooks came in', async () => {
    // Prepare: the third message comes in first, then the first, then the second
    const t = await tenant(2);
    const from = randomPhone();
    const now = Math.floor(Date.now() / 1000);

    // Act
    for (const [text, second] of [['o3', now + 2], ['o1', now], ['o2', now + 1]] as const) {
      await m.sandbox('POST', '/__sandbox/inbound', { from, text, phone_number_id: t.phoneNumberId, timestamp: second });
      await new Promise((r) => setTimeout(r, 300));
    }
    await m.stack.queues.idle();

    // Assess: one answer; the model read o1, o2, o3
    const replies = await aiReplies(from);
    expect(replies).toHaveLength(1);
    expect(replies[0].text.body).toContain('o1\no2\no3');
  });

  it("answers the newest message when Meta delivers an earlier one of the same second again", async () => {
    // Prepare: m1 and m2 of one second come in; then Meta delivers m1 again
    const t = await tenant(1);
    const from = randomPhone();
    const now = Math.floor(Date.now() / 1000);
    const first = await m.sandbox('POST', '/__sandbox/inbound', { from, text: 'Hi', phone_number_id: t.phoneNumberId, timestamp: now });
    await m.sandbox('POST', '/__sandbox/inbound', { from, text: 'I need help with order 77', phone_number_id: t.phoneNumberId, timestamp: now });

    // Act
    const raw = JSON.stringify(first.body.payload);
    const again = await fetch(`${m.stack.url}/webhooks/upstream`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-hub-signature-256': signatureOf(raw, TEST_UPSTREAM.appSecret) }, body: raw });
    await m.stack.queues.idle();

    // Assess
    expect(again.status).toBe(200);
    const replies = await aiReplies(from);
    expect(replies).toHaveLength(1);
    expect(replies[0].text.body).toContain('order 77');
  });

  it('sends the reply it stored failed again when the upstream was unavailable: one AI message, sent once', async () => {
    // Prepare: the upstream answers 500 to the read receipt's and the reply's attempts (three each)
    const t = await tenant();
    const from = randomPhone();
    await m.sandbox('POST', '/__sandbox/faults', { kind: 'error500', count: 6, target: 'messages' });

    // Act
    await t.inbound(from, 'hola, ¿siguen abiertos?');
    await m.stack.queues.idle();

    // Assess: the customer got one answer, and the conversation holds one AI message, sent (the failed one, sent again)
    expect(await aiReplies(from)).toHaveLength(1);
    const cid = await conversationOf(t, from);
    const outbound = (await t.call('GET', `/conversations/v1/${cid}/messages`)).body.messages.filter((x: any) => x.direction === 'outbound');
    expect(outbound).toEqual([expect.objectContaining({ sentBy: 'ai', status: 'sent', retryCount: 1 })]);
  });

  it('retries a failed model call through the queue and then answers', async () => {
    const t = await tenant();
    const from = randomPhone();
    await t.inbound(from, `ai-fail-once ${from}`);
    expect(await aiReplies(from)).toHaveLength(1);
  });
});
