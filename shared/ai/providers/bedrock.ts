/** Amazon Bedrock's Converse API (deployed stacks): one API for every Bedrock model, credentials from the function's role. */
import { BedrockRuntimeClient, ConverseCommand } from '@aws-sdk/client-bedrock-runtime';
import { ProviderError, type CompletionRequest, type ModelProvider } from './provider.ts';

export interface BedrockOptions {
  region: string;
  timeoutMs: number;
  /** Another Bedrock runtime endpoint (VPC endpoint, tests). */
  endpoint?: string;
  maxTokens: number;
}

export class BedrockProvider implements ModelProvider {
  readonly name = 'bedrock';
  private client: BedrockRuntimeClient | undefined;
  constructor(private readonly options: BedrockOptions) {}

  async complete({ system, turns, model }: CompletionRequest): Promise<string> {
    this.client ??= new BedrockRuntimeClient({ region: this.options.region, endpoint: this.options.endpoint });
    let text: string | undefined;
    try {
      const out = await this.client.send(
        new ConverseCommand({
          modelId: model,
          system: [{ text: system }],
          messages: turns.map((t) => ({ role: t.role, content: [{ text: t.content }] })),
          inferenceConfig: { maxTokens: this.options.maxTokens },
        }),
        { abortSignal: AbortSignal.timeout(this.options.timeoutMs) },
      );
      text = out.output?.message?.content?.map((c) => c.text ?? '').join('').trim();
    } catch (err) {
      throw new ProviderError(`Bedrock Converse failed: ${(err as Error).message}`, err);
    }
    if (!text) throw new ProviderError('Bedrock Converse answered no text');
    return text;
  }

  /** Closes the client's connections (tests; a Lambda container keeps them). */
  close(): void {
    this.client?.destroy();
    this.client = undefined;
  }
}
