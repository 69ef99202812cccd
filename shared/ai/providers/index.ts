/** The provider this deployment uses, built once per container from the AI config. */
import { config } from '#shared/config.ts';
import { aiConfig } from '../config.ts';
import { BedrockProvider } from './bedrock.ts';
import { OpenAiCompatibleProvider } from './openai-compatible.ts';
import type { ModelProvider } from './provider.ts';

let provider: ModelProvider | undefined;

export function modelProvider(): ModelProvider {
  provider ??= aiConfig.provider === 'bedrock'
    ? new BedrockProvider({ region: config.region, timeoutMs: aiConfig.timeoutMs, maxTokens: aiConfig.maxTokens })
    : new OpenAiCompatibleProvider({ baseUrl: aiConfig.baseUrl, apiKey: aiConfig.apiKey, timeoutMs: aiConfig.timeoutMs, maxTokens: aiConfig.maxTokens });
  return provider;
}

export { ProviderError, type ChatTurn, type CompletionRequest, type ModelProvider } from './provider.ts';
