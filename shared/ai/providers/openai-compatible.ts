/**
 * Any OpenAI-compatible chat-completions endpoint: OpenAI, a gateway, a local model server (Ollama, vLLM,
 * llama.cpp) or, locally, the sandbox's deterministic responder. Base URL, key and model come from config
 * (AI_BASE_URL, AI_API_KEY, AI_MODEL) or the business's settings (model).
 */
import { ProviderError, type CompletionRequest, type ModelProvider } from './provider.ts';

export interface OpenAiCompatibleOptions {
  baseUrl: string;
  apiKey?: string;
  timeoutMs: number;
  maxTokens: number;
}

export class OpenAiCompatibleProvider implements ModelProvider {
  readonly name = 'openai';
  constructor(private readonly options: OpenAiCompatibleOptions) {}

  async complete({ system, turns, model }: CompletionRequest): Promise<string> {
    let res: Response;
    try {
      res = await fetch(`${this.options.baseUrl}/chat/completions`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}),
        },
        body: JSON.stringify({ model, messages: [{ role: 'system', content: system }, ...turns], max_tokens: this.options.maxTokens }),
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
    } catch (err) {
      throw new ProviderError(`chat completion request failed: ${(err as Error).message}`, err);
    }
    const text = await res.text();
    if (!res.ok) throw new ProviderError(`chat completion answered ${res.status}: ${text.slice(0, 300)}`);
    let content: unknown;
    try {
      content = JSON.parse(text)?.choices?.[0]?.message?.content;
    } catch (err) {
      throw new ProviderError('chat completion answered something that is not JSON', err);
    }
    if (typeof content !== 'string' || content.trim() === '') throw new ProviderError('chat completion answered no text');
    return content.trim();
  }
}
