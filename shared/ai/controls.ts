/**
 * The contract's AI controls: the conversation toggle and pause, the global toggle and pause, the status,
 * and the handoff pause after a human reply. Pauses are stored as an end time only; the decision reads the
 * clock (precedence.ts), so they end by themselves.
 */
import { activePause } from './precedence.ts';
import { extendConversationAiPause, pauseConversationAi, setConversationAiEnabled, type AiMode } from './conversation-ai.ts';
import { getAiSettings, updateAiSettings } from './settings.ts';

const plus = (now: Date, minutes: number) => new Date(now.getTime() + minutes * 60_000).toISOString();
const minutesText = (m: number) => `${m} minute${m === 1 ? '' : 's'}`;

export async function toggleConversationAi(businessId: string, conversationId: string, aiEnabled: boolean, aiMode: AiMode | undefined, now = new Date()) {
  const s = await setConversationAiEnabled(businessId, conversationId, aiEnabled, aiMode);
  return {
    message: aiEnabled ? 'AI enabled for this conversation' : 'AI disabled for this conversation',
    settings: { aiEnabled: s.aiEnabled, aiMode: s.aiMode, aiPausedUntil: activePause(s.aiPausedUntil, now) },
  };
}

export async function pauseConversation(businessId: string, conversationId: string, minutes: number, now = new Date()) {
  const pausedUntil = plus(now, minutes);
  await pauseConversationAi(businessId, conversationId, pausedUntil);
  return { success: true, pausedUntil, message: `AI paused for ${minutesText(minutes)} in this conversation` };
}

export async function setGlobalAi(businessId: string, enabled: boolean) {
  const s = await updateAiSettings(businessId, { enabled });
  return { success: true, enabled: s.enabled };
}

export async function pauseGlobalAi(businessId: string, minutes: number, now = new Date()) {
  const pausedUntil = plus(now, minutes);
  await updateAiSettings(businessId, { pausedUntil }, now);
  return { success: true, pausedUntil, message: `AI paused for all conversations for ${minutesText(minutes)}` };
}

export async function globalAiStatus(businessId: string, now = new Date()) {
  const s = await getAiSettings(businessId);
  return { enabled: s.enabled, pausedUntil: activePause(s.pausedUntil, now) };
}

/**
 * Handoff: a human reply through the API (a send without an `ai` object) pauses the AI in its conversation
 * for the business's handoff pause (AI settings `handoffPauseMinutes`; 0, the default, is off), so that the agent
 * never talks over a person. It only ever lengthens a running pause. (`ai.pause` and `ai.disable` on a send
 * are written by the send path in the message's own transaction.)
 */
export async function pauseAfterHumanReply(businessId: string, conversationId: string, now = new Date()): Promise<void> {
  const { handoffPauseMinutes } = await getAiSettings(businessId);
  if (handoffPauseMinutes > 0) await extendConversationAiPause(businessId, conversationId, plus(now, handoffPauseMinutes));
}
