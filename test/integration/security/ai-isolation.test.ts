/**
 * Tenant isolation of the AI agent: the model sees only the answering business's conversation (its system
 * prompt, its history), and a job naming one business with another business's conversation or message
 * reaches neither the model nor the send path.
 */
import { handleAiJob, type AiJob } from '#shared/ai/agent.ts';
import { updateAiSettings } from '#shared/ai/settings.ts';
import { startAiResponder } from '#infra/local/sandbox/ai-responder.ts';
import { newTenant } from '../../support/api.ts';
import { recordingPorts } from '../../support/ai.ts';
import { putConversation, putMessage } from '../ai/fixtures.ts';

let responder: { url: string; close: () => Promise<void> };
beforeAll(async () => {
  responder = await startAiResponder();
});
afterAll(() => responder?.close());

const ports = () => recordingPorts(responder.url);

it('shows the model only the answering business\'s prompt and history, and ignores jobs that cross businesses', async () => {
  // Prepare: A with a secret prompt and a secret conversation; B with its own conversation.
  const [a, b] = [await newTenant(), await newTenant()];
  const secret = `A-secret-${a.businessId}`;
  await updateAiSettings(a.businessId, { debounceSeconds: 0, systemPrompt: `You work for A. ${secret}` });
  await updateAiSettings(b.businessId, { debounceSeconds: 0 });
  const aConversation = await putConversation(a.businessId);
  await putMessage(a.businessId, aConversation, 'inbound', `my card is ${secret}`);
  const bConversation = await putConversation(b.businessId);
  const bMessage = await putMessage(b.businessId, bConversation, 'inbound', 'hola, ¿tienen envíos?');
  // A's newest message comes after B's: the forged job naming it is the newest news of B's conversation,
  // so only the check that the message belongs to B's conversation can stop it.
  const aMessage = await putMessage(a.businessId, aConversation, 'inbound', `and my address is ${secret}`);
  const job = (businessId: string, conversationId: string, m: { id: string; createdAt: string }): AiJob => ({ businessId, conversationId, messageId: m.id, receivedAt: m.createdAt });

  // Act: B's real job, then forged jobs mixing B's business with A's conversation and message.
  const real = ports();
  const outcome = await handleAiJob(job(b.businessId, bConversation, bMessage), real.ports);
  const forged = ports();
  const crossConversation = await handleAiJob(job(b.businessId, aConversation, aMessage), forged.ports);
  const crossMessage = await handleAiJob(job(b.businessId, bConversation, aMessage), forged.ports);

  // Assess: B's answer used B's data only; the forged jobs reached nothing of A's.
  expect(outcome).toBe('replied');
  expect(real.sent).toEqual([expect.objectContaining({ businessId: b.businessId, conversationId: bConversation })]);
  expect(JSON.stringify(real.requests)).not.toContain(secret);
  expect(JSON.stringify(real.sent)).not.toContain(secret);
  expect(crossConversation).toBe('nothing_to_answer');
  expect(crossMessage).toBe('nothing_to_answer');
  expect(forged.requests).toEqual([]);
  expect(forged.sent).toEqual([]);
  console.log('hardening: isolation: AI agent — model requests and replies of business B carry nothing of business A (3 jobs, 2 forged)');
});
