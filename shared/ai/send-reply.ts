/** An AI reply goes out through the ordinary send path, marked as sent by the AI. */
import { ApiError } from '#shared/http/errors.ts';
import { sendMessage } from '#shared/messages/send.ts';
import type { AgentPorts } from './agent.ts';

/** The upstream's limit for a text body. */
const MAX_TEXT = 4096;

export const sendAiText: AgentPorts['send'] = async (businessId, _conversationId, to, text) => {
  const body = text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT - 1)}…` : text;
  try {
    const result = await sendMessage(businessId, { to, type: 'text', text: { body } }, { sentBy: 'ai' });
    return { sent: true, messageId: result.data.id };
  } catch (err) {
    // A refused delivery (window closed, blocked...) is stored as failed by the send path and retrying would not
    // help; a throttled or unavailable upstream (429, 5xx) is worth the queue's retry.
    if (err instanceof ApiError && err.status < 500 && err.status !== 429) return { sent: false, error: String(err.body.error ?? err.message) };
    throw err;
  }
};
