/**
 * The AI agent's environment, read once per container through shared/settings/env.ts.
 *
 * Providers: `bedrock` (the default) uses Amazon Bedrock's Converse API with the function's role; `openai` speaks
 * the OpenAI chat-completions protocol to any compatible endpoint (OpenAI itself, a gateway, a local model server
 * such as Ollama or vLLM). The defaults are the deployed ones; the local stack sets AI_PROVIDER, AI_BASE_URL,
 * AI_MODEL and AI_DEBOUNCE_SECONDS itself (the sandbox's deterministic responder), so no branch here knows about it.
 */
import { ConfigurationError, numberEnv, optionalEnv } from '#shared/settings/env.ts';

export type ProviderName = 'openai' | 'bedrock';

const providerSetting = optionalEnv('AI_PROVIDER') ?? 'bedrock';
if (providerSetting !== 'bedrock' && providerSetting !== 'openai') throw new ConfigurationError('AI_PROVIDER', `must be bedrock or openai (got "${providerSetting}")`);
const provider: ProviderName = providerSetting;

export const DEFAULT_SYSTEM_PROMPT =
  'You are the helpful customer-service assistant of this business on WhatsApp. Answer briefly and politely in the language of the customer. ' +
  'If you cannot help, say that a person from the team will follow up.';

export const aiConfig = {
  provider,
  /** Base URL of an OpenAI-compatible API (without `/chat/completions`). */
  baseUrl: (optionalEnv('AI_BASE_URL') ?? 'https://api.openai.com/v1').replace(/\/+$/, ''),
  apiKey: optionalEnv('AI_API_KEY') ?? '',
  /** Default model when a business sets none. */
  model: optionalEnv('AI_MODEL') ?? (provider === 'bedrock' ? 'amazon.nova-lite-v1:0' : 'gpt-4o-mini'),
  /** A provider call longer than this fails and the queue retries it. */
  timeoutMs: numberEnv('AI_TIMEOUT_MS', 20_000, { min: 1 }),
  maxTokens: numberEnv('AI_MAX_TOKENS', 512, { min: 1 }),
  /** Messages of the conversation sent to the model as history. */
  historyLimit: numberEnv('AI_HISTORY_LIMIT', 20, { min: 1 }),
  /** Default debounce window: inbound messages within it get one answer. */
  debounceSeconds: numberEnv('AI_DEBOUNCE_SECONDS', 3, { min: 0 }),
  /**
   * Default pause after a human reply (handoff): off. The contract pauses the AI after a send only when asked
   * (`ai.pause`); a business that wants every human reply to pause it sets `handoffPauseMinutes`.
   */
  handoffPauseMinutes: numberEnv('AI_HANDOFF_PAUSE_MINUTES', 0, { min: 0 }),
  /** How long a reply claim holds before another delivery may take it over (below the queue's visibility timeout). */
  claimLeaseSeconds: numberEnv('AI_CLAIM_LEASE_SECONDS', 90, { min: 1 }),
} as const;
