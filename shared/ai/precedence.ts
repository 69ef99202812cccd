/**
 * Whether the AI may answer an inbound message: the contract's four conditions in its precedence order
 * (global toggle, global pause, conversation toggle, conversation pause). Pure: the clock is passed in, so a
 * timed pause ends by itself at `pausedUntil` without any job to lift it.
 */

export interface GlobalAiState {
  enabled: boolean;
  pausedUntil: string | null;
}

export interface ConversationAiState {
  aiEnabled: boolean;
  aiPausedUntil: string | null;
}

/** Why the AI stays silent, named after the condition that blocks it (the highest in precedence wins). */
export type BlockReason = 'global_disabled' | 'global_paused' | 'conversation_disabled' | 'conversation_paused';

export type Decision = { answer: true } | { answer: false; blockedBy: BlockReason };

/** A pause runs while the clock is before its end; at `pausedUntil` exactly the AI is active again. */
export const pauseRunning = (pausedUntil: string | null | undefined, now: Date): boolean => {
  if (!pausedUntil) return false;
  const end = Date.parse(pausedUntil);
  return Number.isFinite(end) && now.getTime() < end;
};

/** A pause end that is still running, else null: what the API shows as the current pause. */
export const activePause = (pausedUntil: string | null | undefined, now: Date): string | null =>
  pauseRunning(pausedUntil, now) ? (pausedUntil as string) : null;

export function decide(global: GlobalAiState, conversation: ConversationAiState, now: Date): Decision {
  if (!global.enabled) return { answer: false, blockedBy: 'global_disabled' };
  if (pauseRunning(global.pausedUntil, now)) return { answer: false, blockedBy: 'global_paused' };
  if (!conversation.aiEnabled) return { answer: false, blockedBy: 'conversation_disabled' };
  if (pauseRunning(conversation.aiPausedUntil, now)) return { answer: false, blockedBy: 'conversation_paused' };
  return { answer: true };
}
