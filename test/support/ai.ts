/**
 * The AI agent's ports for integration tests: real conversation history and a real HTTP provider (the local
 * chat-completions responder at `responderUrl`), with the send recorded instead of sent. `sent` and `requests`
 * collect what the agent sent and what it asked the model.
 */
import { conversationHistory } from '#shared/ai/conversation-history.ts';
import { getConversation } from '#shared/conversations/repository.ts';
import { OpenAiCompatibleProvider } from '#shared/ai/providers/openai-compatible.ts';
import type { AgentPorts } from '#shared/ai/agent.ts';
import type { CompletionRequest } from '#shared/ai/providers/provider.ts';

export interface SentReply { businessId: string; conversationId: string; to: string; text: string }

export function recordingPorts(responderUrl: string, overrides: Partial<AgentPorts> = {}) {
  const sent: SentReply[] = [];
  const requests: CompletionRequest[] = [];
  /** What the agent did, in order: `read:<messageId>` when it acknowledged, `model` when it asked the model. */
  const steps: string[] = [];
  const provider = new OpenAiCompatibleProvider({ baseUrl: `${responderUrl}/v1`, timeoutMs: 5000, maxTokens: 100 });
  const p: AgentPorts = {
    recipient: async (bid, cid) => (await getConversation(bid, cid))?.phoneNumber ?? undefined,
    history: conversationHistory,
    send: async (businessId, conversationId, to, text) => {
      sent.push({ businessId, conversationId, to, text });
      return { sent: true, messageId: `m${sent.length}` };
    },
    resend: async (_businessId, replyId) => ({ sent: true, messageId: replyId }),
    acknowledge: async (_businessId, messageId) => {
      steps.push(`read:${messageId}`);
    },
    provider: () => ({ name: 'test', complete: (r) => (steps.push('model'), requests.push(r), provider.complete(r)) }),
    ...overrides,
  };
  return { ports: p, sent, requests, steps };
}
