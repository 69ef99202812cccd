/** The one small interface every model provider implements. */

export interface ChatTurn {
  role: 'user' | 'assistant';
  content: string;
}

export interface CompletionRequest {
  system: string;
  /** Oldest first; starts with a user turn and alternates (see history.ts). */
  turns: ChatTurn[];
  model: string;
}

export interface ModelProvider {
  readonly name: string;
  /** The reply text. Throws ProviderError on a failure the queue should retry. */
  complete(request: CompletionRequest): Promise<string>;
}

/** A provider failure (HTTP error, time-out, empty answer): the AI worker lets the queue retry the message. */
export class ProviderError extends Error {
  constructor(message: string, override readonly cause?: unknown) {
    super(message);
    this.name = 'ProviderError';
  }
}
