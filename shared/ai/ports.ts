/**
 * The agent's connections to the rest of the service: the conversation (who to answer), its messages
 * (the model's history), the ordinary send path (so an AI reply follows every rule of any message and
 * emits `message.sent` marked as sent by the AI) and the deployment's model provider.
 */
import { getConversation } from '#shared/conversations/repository.ts';
import type { AgentPorts } from './agent.ts';
import { conversationHistory } from './conversation-history.ts';
import { modelProvider } from './providers/index.ts';
import { resendAiText, sendAiText } from './send-reply.ts';
import { markRead } from '#shared/messages/read-receipt.ts';

export const agentPorts: AgentPorts = {
  recipient: async (businessId, conversationId) => (await getConversation(businessId, conversationId))?.phoneNumber ?? undefined,
  history: conversationHistory,
  send: sendAiText,
  resend: resendAiText,
  acknowledge: async (businessId, messageId) => {
    await markRead(businessId, { messaging_product: 'whatsapp', status: 'read', message_id: messageId, typing_indicator: { type: 'text' } });
  },
  provider: modelProvider,
};
