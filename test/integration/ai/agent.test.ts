/**
 * The agent's rules against DynamoDB Local and a real (local, deterministic) chat-completions server.
 * The send port records instead of sending: the whole send path is covered by the e2e test.
 */
import { handleAiJob, type AgentPorts, type AiJob } from '#shared/ai/agent.ts';
import { getConversation } from '#shared/conversations/repository.ts';
import { updateAiSettings } from '#shared/ai/settings.ts';
import { pauseAfterHumanReply, pauseConversation, pauseGlobalAi, setGlobalAi, toggleConversationAi } from '#shared/ai/controls.ts';
import { getConversationAi } from '#shared/ai/conversation-ai.ts';
import { replyMarker } from '#shared/ai/reply-state.ts';
import { ProviderError } from '#shared/ai/providers/provider.ts';
import { startAiResponder } from '#infra/local/sandbox/ai-responder.ts';
import { newTenant, type TestTenant } from '../../support/api.ts';
import { recordingPorts } from '../../support/ai.ts';

// The deployment allows the model this file's business chooses (shared/ai/models.ts reads it on every use).
process.env.AI_ALLOWED_MODELS = 'pirate-1';
import { putConversation, putMessage } from './fixtures.ts';
import { startQueueSink, type QueueSink } from '../../support/queues.ts';

let responder: { url: string; close: () => Promise<void> };
// The debounce re-queues are the messages the SQS stand-in received; nothing consumes them.
let queues: QueueSink;
afterAll(() => queues?.close());
beforeAll(async () => {
  queues = await startQueueSink();
  responder = await startAiResponder();
});
afterAll(async () => {
  await responder.close();
});

/** Real history and a real HTTP provider; the send is recorded. */
const ports = (overrides: Partial<AgentPorts> = {}) => recordingPorts(responder.url, overrides);

let tenant: TestTenant;
beforeEach(async () => {
  tenant = await newTenant();
  await updateAiSettings(tenant.businessId, { debounceSeconds: 0 });
});

async function inbound(text: string, conversationId?: string): Promise<AiJob> {
  const cid = conversationId ?? (await putConversation(tenant.businessId));
  const m = await putMessage(tenant.businessId, cid, 'inbound', text);
  return { businessId: tenant.businessId, conversationId: cid, messageId: m.id, receivedAt: m.createdAt };
}

describe('the AI agent', () => {
  it('answers an inbound message through the send path when all four conditions hold', async () => {
    // Prepare
    const job = await inbound('hola, do you ship to Mexico?');
    const { ports: p, sent, requests } = ports();

    // Act
    const outcome = await handleAiJob(job, p);

    // Assess
    expect(outcome).toBe('replied');
    expect(sent).toHaveLength(1);
    expect(sent[0].to).toBe((await getConversation(tenant.businessId, job.conversationId))!.phoneNumber);
    expect(sent[0].text).toContain('hola, do you ship to Mexico?');
    expect(requests[0].turns).toEqual([{ role: 'user', content: 'hola, do you ship to Mexico?' }]);
    expect(requests[0].system).toMatch(/assistant/);
    expect(await replyMarker(tenant.businessId, job.messageId)).toMatchObject({ status: 'replied' });
  });

  it("marks the customer's message read with typing before asking the model, and answers even when that fails", async () => {
    // Prepare
    const job = await inbound('¿tienen talla M?');
    const { ports: p, steps } = ports();
    const failing = ports({ acknowledge: async () => { throw new Error('upstream down'); } });

    // Act
    const outcome = await handleAiJob(job, p);
    const second = await handleAiJob(await inbound('¿y talla L?'), failing.ports);

    // Assess
    expect(outcome).toBe('replied');
    expect(steps).toEqual([`read:${job.messageId}`, 'model']);
    expect(second).toBe('replied');
    expect(failing.sent).toHaveLength(1);
  });

  it('uses the business system prompt and model, and the conversation history', async () => {
    // Prepare
    await updateAiSettings(tenant.businessId, { systemPrompt: 'Be a pirate.', model: 'pirate-1' });
    const cid = await putConversation(tenant.businessId);
    await putMessage(tenant.businessId, cid, 'inbound', 'first question');
    await putMessage(tenant.businessId, cid, 'outbound', 'first answer', { sentBy: 'ai' });
    await putMessage(tenant.businessId, cid, 'outbound', 'never arrived', { status: 'failed' });
    const job = await inbound('second question', cid);
    const { ports: p, requests } = ports();

    // Act
    await handleAiJob(job, p);

    // Assess
    expect(requests[0]).toEqual({
      system: 'Be a pirate.',
      model: 'pirate-1',
      turns: [
        { role: 'user', content: 'first question' },
        { role: 'assistant', content: 'first answer' },
        { role: 'user', content: 'second question' },
      ],
    });
  });

  it.each([
    ['the global toggle is off', 'global_disabled', async (cid: string) => void (await setGlobalAi(tenant.businessId, false))],
    ['a global pause runs', 'global_paused', async (cid: string) => void (await pauseGlobalAi(tenant.businessId, 10))],
    ['the conversation toggle is off', 'conversation_disabled', async (cid: string) => void (await toggleConversationAi(tenant.businessId, cid, false, undefined))],
    ['a conversation pause runs', 'conversation_paused', async (cid: string) => void (await pauseConversation(tenant.businessId, cid, 10))],
  ])('stays silent when %s', async (_label, reason, block) => {
    // Prepare
    const job = await inbound('anyone there?');
    await block(job.conversationId);
    const { ports: p, sent } = ports();

    // Act
    const outcome = await handleAiJob(job, p);

    // Assess
    expect(outcome).toBe(`blocked:${reason}`);
    expect(sent).toHaveLength(0);
    expect(await replyMarker(tenant.businessId, job.messageId)).toBeUndefined();
  });

  it('answers a message that comes in once a pause has ended, without any job lifting it', async () => {
    // Prepare
    const job = await inbound('still there?');
    const { pausedUntil } = await pauseConversation(tenant.businessId, job.conversationId, 1);
    await pauseGlobalAi(tenant.businessId, 1);
    const { ports: p, sent } = ports();
    const justBefore = () => new Date(Date.parse(pausedUntil) - 1000);
    const justAfter = () => new Date(Date.parse(pausedUntil) + 1000);

    // Act
    const before = await handleAiJob({ ...job, receivedAt: justBefore().toISOString() }, p, justBefore);
    const after = await handleAiJob({ ...job, receivedAt: justAfter().toISOString() }, p, justAfter);

    // Assess
    expect(before).toBe('blocked:global_paused');
    expect(after).toBe('replied');
    expect(sent).toHaveLength(1);
  });

  it('answers a message that comes in after a pause ended though the customer wrote it before (Meta delivered it late)', async () => {
    // Prepare: written two hours ago (before the pause began), delivered once the pause has ended
    const job = await inbound('lo escribí hace rato');
    const { pausedUntil } = await pauseGlobalAi(tenant.businessId, 1);
    const { ports: p, sent } = ports();
    const justAfter = () => new Date(Date.parse(pausedUntil) + 1000);

    // Act
    const outcome = await handleAiJob({ ...job, receivedAt: new Date(Date.now() - 2 * 3600_000).toISOString() }, p, justAfter);

    // Assess
    expect(outcome).toBe('replied');
    expect(sent).toHaveLength(1);
  });

  it('answers an older message that comes in after a pause ended, though a newer one came in during the pause', async () => {
    // Prepare: the newer message comes in during the pause; the older one (Meta delivered it late) once it ended
    const newer = await inbound('¿siguen ahí?');
    const older = { ...(await inbound('hola', newer.conversationId)), receivedAt: new Date(Date.now() - 60_000).toISOString() };
    const { pausedUntil } = await pauseGlobalAi(tenant.businessId, 1);
    const { ports: p, sent } = ports();
    const inPause = () => new Date(Date.parse(pausedUntil) - 1000);
    const justAfter = () => new Date(Date.parse(pausedUntil) + 1000);

    // Act
    const first = await handleAiJob({ ...newer, receivedAt: inPause().toISOString() }, p, inPause);
    const second = await handleAiJob(older, p, justAfter);

    // Assess
    expect([first, second]).toEqual(['blocked:global_paused', 'replied']);
    expect(sent).toHaveLength(1);
  });

  it('leaves a message written during a pause or while the AI was off unanswered when the block ends within the debounce window', async () => {
    // Prepare: a debounce window; one message comes in under a pause that ends within it, another while the
    // conversation's AI is off and turned on again within it
    await updateAiSettings(tenant.businessId, { debounceSeconds: 3 });
    const paused = await inbound('written during the pause');
    const { pausedUntil } = await pauseConversation(tenant.businessId, paused.conversationId, 1);
    const off = await inbound('written while the AI was off');
    await toggleConversationAi(tenant.businessId, off.conversationId, false, undefined);
    const { ports: p, sent } = ports();
    const inPause = new Date(Date.parse(pausedUntil) - 1000);
    queues.sqs.take('ai');

    // Act: each message's first delivery as it comes in (the AI is turned on again, and the pause ends, within the window)
    const outcomes = [
      await handleAiJob({ ...paused, receivedAt: inPause.toISOString() }, p, () => inPause),
      await handleAiJob(off, p),
    ];
    await toggleConversationAi(tenant.businessId, off.conversationId, true, undefined);

    // Assess: no answer phase queued for either, and nothing sent
    expect(outcomes).toEqual(['blocked:conversation_paused', 'blocked:conversation_disabled']);
    expect(queues.sqs.take('ai')).toHaveLength(0);
    expect(sent).toHaveLength(0);
  });

  it('does not answer into a conversation an agent closed after the message came in', async () => {
    // Prepare
    const job = await inbound('hola, ya me atendieron');
    const { closeConversation } = await import('#shared/conversations/close.ts');
    await closeConversation(tenant.businessId, job.conversationId);
    const { ports: p, sent } = ports();

    // Act
    const outcome = await handleAiJob(job, p);

    // Assess
    expect(outcome).toBe('blocked:conversation_closed');
    expect(sent).toHaveLength(0);
  });

  it('never replies twice to one inbound message, whether redelivered later or at the same time', async () => {
    // Prepare
    const job = await inbound('hello');
    const { ports: p, sent } = ports();

    // Act
    const concurrent = await Promise.all([handleAiJob(job, p), handleAiJob(job, p), handleAiJob({ ...job, phase: 'answer' }, p)]);
    const later = await handleAiJob(job, p);

    // Assess
    expect(concurrent.filter((o) => o === 'replied')).toHaveLength(1);
    expect(later).toBe('duplicate');
    expect(sent).toHaveLength(1);
  });

  it('gives several inbound messages within the debounce window one answer that sees them all', async () => {
    // Prepare
    await updateAiSettings(tenant.businessId, { debounceSeconds: 2 });
    const first = await inbound('hi');
    const second = await inbound('I have a question', first.conversationId);
    const third = await inbound('about my order', first.conversationId);
    const { ports: p, sent, requests } = ports();
    queues.sqs.take('ai');

    // Act: the first deliveries (in arrival order) re-queue themselves for the window...
    const firstPass = [];
    for (const j of [first, second, third]) firstPass.push(await handleAiJob(j, p));
    const delayed = queues.sqs.take('ai');
    // ...and after it only the newest answers.
    const secondPass = await Promise.all(delayed.map((m) => handleAiJob(JSON.parse(m.body), p)));

    // Assess
    expect(firstPass).toEqual(['debounced', 'debounced', 'debounced']);
    expect(delayed.map((m) => (m.visibleAt - m.sentAt) / 1000)).toEqual([2, 2, 2]);
    expect(secondPass.sort()).toEqual(['replied', 'superseded', 'superseded']);
    expect(sent).toHaveLength(1);
    expect(requests[0].turns).toEqual([{ role: 'user', content: 'hi\nI have a question\nabout my order' }]);
  });

  it('drops an older message that arrives after a newer one was recorded', async () => {
    await updateAiSettings(tenant.businessId, { debounceSeconds: 2 });
    const older = await inbound('older');
    const newer = await inbound('newer', older.conversationId);
    const { ports: p } = ports();
    queues.sqs.take('ai');
    expect(await handleAiJob(newer, p)).toBe('debounced');
    expect(await handleAiJob(older, p)).toBe('superseded');
    expect(queues.sqs.take('ai')).toHaveLength(1);
  });

  it('lets a provider failure throw and answers on the retry', async () => {
    // Prepare: the sandbox responder fails the first request for this text
    const job = await inbound(`ai-fail-once ${job_id()}`);
    const { ports: p, sent } = ports();

    // Act
    const first = await handleAiJob(job, p).catch((err) => err);
    const markerAfterFailure = await replyMarker(tenant.businessId, job.messageId);
    const retry = await handleAiJob(job, p);

    // Assess
    expect(first).toBeInstanceOf(ProviderError);
    expect(markerAfterFailure).toBeUndefined();
    expect(retry).toBe('replied');
    expect(sent).toHaveLength(1);
  });

  it('does not answer when a person replied while the model was thinking', async () => {
    // Prepare: a business whose human replies pause the AI
    await updateAiSettings(tenant.businessId, { handoffPauseMinutes: 5 });
    const job = await inbound('can a human help me?');
    const slow = ports();
    const { ports: p, sent } = ports({
      provider: () => ({
        name: 'slow',
        complete: async (r) => {
          await pauseAfterHumanReply(tenant.businessId, job.conversationId);
          return slow.ports.provider().complete(r);
        },
      }),
    });

    // Act
    const outcome = await handleAiJob(job, p);

    // Assess
    expect(outcome).toBe('blocked:conversation_paused');
    expect(sent).toHaveLength(0);
    expect(await replyMarker(tenant.businessId, job.messageId)).toMatchObject({ status: 'skipped' });
  });

  it('has nothing to answer when the last message is already a reply', async () => {
    const job = await inbound('hi');
    await putMessage(tenant.businessId, job.conversationId, 'outbound', 'a person answered');
    const { ports: p, sent } = ports();
    expect(await handleAiJob(job, p)).toBe('nothing_to_answer');
    expect(sent).toHaveLength(0);
  });

  it("has nothing to answer when a person replied, even if the customer's reaction to that reply came after it", async () => {
    // Prepare: the customer's text, a person's answer, then the customer's reaction to the answer (not a turn of its own)
    const job = await inbound('hi');
    const answer = await putMessage(tenant.businessId, job.conversationId, 'outbound', 'a person answered');
    await putMessage(tenant.businessId, job.conversationId, 'inbound', '', {
      messageType: 'reaction', content: { message_id: answer.wamid, emoji: '👍' }, payload: { type: 'reaction', reaction: { message_id: answer.wamid, emoji: '👍' } },
    });
    const { ports: p, sent } = ports();

    // Act + Assess
    expect(await handleAiJob(job, p)).toBe('nothing_to_answer');
    expect(sent).toHaveLength(0);
  });

  it('settles as failed, without retrying, when the upstream refuses the reply', async () => {
    const job = await inbound('hi');
    const { ports: p } = ports({ send: async () => ({ sent: false, error: 'message_delivery_failed' }) });
    expect(await handleAiJob(job, p)).toBe('send_failed');
    expect(await replyMarker(tenant.businessId, job.messageId)).toMatchObject({ status: 'failed' });
    expect(await handleAiJob(job, p)).toBe('duplicate');
  });
});

describe('handoff after a human reply', () => {
  it('is off by default: a human reply leaves the AI answering', async () => {
    const other = await newTenant();
    const cid = await putConversation(other.businessId);
    await pauseAfterHumanReply(other.businessId, cid);
    expect((await getConversationAi(other.businessId, cid))!.aiPausedUntil).toBeNull();
  });

  it('follows the configured minutes, and 0 turns it off', async () => {
    const cid = await putConversation(tenant.businessId);
    await updateAiSettings(tenant.businessId, { handoffPauseMinutes: 0 });
    await pauseAfterHumanReply(tenant.businessId, cid);
    expect((await getConversationAi(tenant.businessId, cid))!.aiPausedUntil).toBeNull();
    await updateAiSettings(tenant.businessId, { handoffPauseMinutes: 30 });
    await pauseAfterHumanReply(tenant.businessId, cid);
    expect(Math.round((Date.parse((await getConversationAi(tenant.businessId, cid))!.aiPausedUntil!) - Date.now()) / 60_000)).toBe(30);
  });

  it('never shortens a longer pause set on purpose', async () => {
    await updateAiSettings(tenant.businessId, { handoffPauseMinutes: 30 });
    const cid = await putConversation(tenant.businessId);
    const { pausedUntil } = await pauseConversation(tenant.businessId, cid, 120);
    await pauseAfterHumanReply(tenant.businessId, cid);
    expect((await getConversationAi(tenant.businessId, cid))!.aiPausedUntil).toBe(pausedUntil);
  });
});

let n = 0;
function job_id() {
  return `${Date.now()}-${++n}`;
}
