/**
 * The AI agent's environment, read once per container like shared/config.ts.
 *
 * Providers: `openai` speaks the OpenAI chat-completions protocol to any compatible endpoint (OpenAI itself,
 * a gateway, a local model server such as Ollama or vLLM); `bedrock` uses Amazon Bedrock's Converse API with
 * the function's role. Locally (in-process queues) the default is the sandbox's deterministic responder,
 * so the whole loop runs without any account.
 */
import { config } from '#shared/config.ts';

const env = process.env;

const int = (name: string, fallback: number): number => {
  const n = Number(env[name]);
  return env[name] !== undefined && env[name] !== '' && Number.isFinite(n) ? n : fallback;
};

export type ProviderName = 'openai' | 'bedrock';

const provider: ProviderName = env.AI_PROVIDER === 'bedrock' || env.AI_PROVIDER === 'openai'
  ? env.AI_PROVIDER
  : config.localQueues ? 'openai' : 'bedrock';

export const DEFAULT_SYSTEM_PROMPT =
  'You are the helpful customer-service assistant of this business on WhatsApp. Answer briefly and politely in the language of the customer. ' +
  'If you cannot help, say that a person from the team will follow up.';

export const aiConfig = {
  provider,
  /** Base URL of an OpenAI-compatible API (without `/chat/completions`). Locally: the sandbox's responder. */
  baseUrl: (env.AI_BASE_URL || (config.localQueues ? `${config.upstreamBaseUrl}/v1` : 'https://api.openai.com/v1')).replace(/\/+$/, ''),
  apiKey: env.AI_API_KEY ?? '',
  /** Default model when a business sets none. */
  model: env.AI_MODEL || (provider === 'bedrock' ? 'amazon.nova-lite-v1:0' : config.localQueues ? 'sandbox-echo' : 'gpt-4o-mini'),
  /** A provider call longer than this fails and the queue retries it. */
  timeoutMs: int('AI_TIMEOUT_MS', 20_000),
  maxTokens: int('AI_MAX_TOKENS', 512),
  /** Messages of the conversation sent to the model as history. */
  historyLimit: int('AI_HISTORY_LIMIT', 20),
  /** Default debounce window: inbound messages within it get one answer (shorter locally, to keep tests quick). */
  debounceSeconds: int('AI_DEBOUNCE_SECONDS', config.localQueues ? 1 : 3),
  /** Default pause after a human reply (handoff). */
  handoffPauseMinutes: int('AI_HANDOFF_PAUSE_MINUTES', 5),
  /** How long a reply claim holds before another delivery may take it over (below the queue's visibility timeout). */
  claimLeaseSeconds: int('AI_CLAIM_LEASE_SECONDS', 90),
} as const;
