/** An AI reply goes out through the ordinary send path, marked as sent by the AI; one stored but not sent goes again by its retry. */
import { ApiError } from '#shared/http/errors.ts';
import { sendMessage } from '#shared/messages/send.ts';
import { retryMessage } from '#shared/messages/retry.ts';
import { ReplyNotSent, type AgentPorts } from './agent.ts';

/** An upstream that was unavailable (throttled, 5xx) after the send's attempts: the reply is worth sending again later. */
const unavailable = (err: ApiError): boolean => err.status >= 500 || err.status === 429;

/** The upstream's limit for a text body. */
const MAX_TEXT = 4096;

export const sendAiText: AgentPorts['send'] = async (businessId, _conversationId, to, text) => {
  const body = text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT - 1)}…` : text;
  try {
    const result = await sendMessage(businessId, { to, type: 'text', text: { body } }, { sentBy: 'ai' });
    return { sent: true, messageId: result.data.id };
  } catch (err) {
    // A refused delivery (window closed, blocked...) is stored as failed by the send path and retrying would not
    // help; a throttled or unavailable upstream (429, 5xx) is worth the queue's retry, of the reply stored failed.
    if (err instanceof ApiError && !unavailable(err)) return { sent: false, error: String(err.body.error ?? err.message) };
    const stored = err instanceof ApiError ? (err.body.data as { id?: string } | undefined)?.id : undefined;
    throw stored ? new ReplyNotSent(stored, { cause: err }) : err;
  }
};

export const resendAiText: AgentPorts['resend'] = async (businessId, replyId) => {
  try {
    await retryMessage(businessId, replyId);
    return { sent: true, messageId: replyId };
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    // Sent meanwhile (the client retried it, or its status came in): this inbound message is answered.
    if (err.body.error === 'invalid_state') return { sent: true, messageId: replyId };
    // Still unavailable: the queue's next retry tries again; refused for good: it stays failed, as a first send would.
    if (err.body.action_required === 'retry_later' || unavailable(err)) throw new ReplyNotSent(replyId, { cause: err });
    return { sent: false, messageId: replyId, error: String(err.body.error ?? err.message) };
  }
};
