/**
 * The conversation's recent messages as model turns: customer messages are `user`, everything sent to the
 * customer (by a person, a broadcast or the AI) is `assistant`. Providers need the turns to start with the
 * customer and to alternate (Bedrock Converse refuses anything else), so consecutive turns of one side are joined.
 */
import type { ChatTurn } from './providers/provider.ts';

export interface HistoryMessage {
  id: string;
  direction: 'inbound' | 'outbound';
  /** The text of the message, or a short description of a non-text message (`[image]`). */
  text: string;
}

export function toTurns(messages: HistoryMessage[], limit: number): ChatTurn[] {
  const turns: ChatTurn[] = [];
  for (const m of messages.slice(-limit)) {
    const role = m.direction === 'inbound' ? 'user' : 'assistant';
    const text = m.text.trim();
    if (!text) continue;
    if (turns.length === 0 && role === 'assistant') continue;
    const last = turns[turns.length - 1];
    if (last?.role === role) last.content = `${last.content}\n${text}`;
    else turns.push({ role, content: text });
  }
  // The model answers the customer: when someone already spoke after them, there is nothing to answer.
  return turns.length > 0 && turns[turns.length - 1].role === 'user' ? turns : [];
}
