/**
 * The local stand-in for Lambda's SQS event source mapping: for each queue of shared/routes.ts `workers` it
 * receives messages from the SQS stand-in (infra/local/aws/sqs.ts, where service code sent them through
 * @aws-sdk/client-sqs) and hands its worker module real SQS events, in batches of the worker's batch size. It
 * honours `batchItemFailures` (partial batch responses) and thrown errors by making the messages visible again
 * after a delay, and moves a message to the queue's dead-letter list after maxReceiveCount receives.
 *
 * It owns the queue services it pumps from: `stop()` closes them too.
 */
import type { SQSEvent, SQSRecord, SQSBatchResponse, Context } from 'aws-lambda';
import { workers, type QueueName, type Worker } from '#shared/routes.ts';
import type { QueueServices } from './aws/queue-services.ts';
import { workerContext } from './lambda/context.ts';
import { LOCAL_REGION, type QueuedMessage, type SendOptions } from './aws/sqs.ts';

export interface DeadLetter {
  queue: QueueName;
  messageId: string;
  body: string;
  receiveCount: number;
  reason: string;
}

type WorkerHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | void>;

export interface LocalQueuesOptions {
  /** Delay before a failed message is received again (SQS: the visibility timeout). */
  retryDelayMs?: number;
  /**
   * Concurrent batches per queue (Lambda: concurrent invocations of the worker; at most the worker's
   * `maxConcurrency`). Each batch is what is visible when a slot is free, up to the batch size, as a poll
   * of Lambda's event source mapping returns: a burst fills batches while every slot is busy.
   */
  concurrency?: number;
  /** Loads a worker module (default: import from functions/). */
  load?: (worker: Worker) => Promise<WorkerHandler>;
  /** The queues whose workers run (default: all); messages of the others stay queued, as with a disabled event source. */
  queues?: QueueName[];
  onError?: (queue: QueueName, err: unknown) => void;
}

export class LocalQueues {
  readonly deadLetters: DeadLetter[] = [];
  /** Batches being handled, per queue. */
  private readonly inFlight = new Map<QueueName, number>();
  private readonly handlers = new Map<QueueName, Promise<WorkerHandler>>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly retryDelayMs: number;
  private readonly concurrency: number;
  private waiters: (() => void)[] = [];

  constructor(readonly services: QueueServices, private readonly options: LocalQueuesOptions = {}) {
    this.retryDelayMs = options.retryDelayMs ?? 1000;
    this.concurrency = options.concurrency ?? 4;
    for (const w of workers) this.inFlight.set(w.queue, 0);
  }

  /** Starts pumping: at once when a message arrives, and every 25 ms for delayed and retried ones. */
  start(): this {
    this.services.sqs.onMessage(() => queueMicrotask(() => this.pump()));
    this.timer = setInterval(() => this.pump(), 25);
    this.timer.unref();
    return this;
  }

  /** Stops pumping and closes the queue services. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.services.close();
  }

  /** Sends as a producer outside the service would (tests that hand a worker a message of their own). */
  async send(queue: QueueName, body: string, options: SendOptions = {}): Promise<void> {
    this.services.sqs.send(queue, body, options);
  }

  /** Whether messages of `queue` are waiting or being handled. */
  /**
   * Resolves once `queue` has no message to take now and none being handled (delayed messages do not count), or
   * after `timeoutMs`: what a message sent to it has done by then can be read. At once for a queue not pumped here.
   */
  async caughtUp(queue: QueueName, timeoutMs: number): Promise<void> {
    const pending = () => (this.inFlight.get(queue) ?? 0) > 0 || this.services.sqs.messages(queue).some((m) => m.visibleAt <= Date.now());
    await this.waitUntil(() => !this.pumps(queue) || this.stopped || !pending(), timeoutMs);
  }

  /** Whether `done` came true within `timeoutMs`, looked at whenever a batch ends and every 20 ms. */
  private async waitUntil(done: () => boolean, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!done()) {
      if (Date.now() > deadline) return false;
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 20);
      });
    }
    return true;
  }

  private busy(queue: QueueName): boolean {
    return this.services.sqs.messages(queue).length > 0 || (this.inFlight.get(queue) ?? 0) > 0;
  }

  /**
   * Resolves when every queue is empty, nothing is in flight and no SendMessage is half-way (tests).
   * Delayed messages count as waiting.
   */
  async idle(timeoutMs = 20_000): Promise<void> {
    const settled = await this.waitUntil(() => this.services.sqs.busy === 0 && !workers.some((w) => this.pumps(w.queue) && this.busy(w.queue)), timeoutMs);
    if (!settled) {
      const state = workers.map((w) => `${w.queue}=${this.services.sqs.messages(w.queue).length} waiting, ${this.inFlight.get(w.queue)} batches`);
      throw new Error(`queues not idle after ${timeoutMs} ms: ${state.join('; ')}`);
    }
  }

  private handler(worker: Worker): Promise<WorkerHandler> {
    let h = this.handlers.get(worker.queue);
    if (!h) {
      h = this.options.load
        ? this.options.load(worker)
        : import(`../../functions/${worker.handler}.ts`).then((m) => m.handler as WorkerHandler);
      this.handlers.set(worker.queue, h);
    }
    return h;
  }

  private pumps(queue: QueueName): boolean {
    return !this.options.queues || this.options.queues.includes(queue);
  }

  private pump(): void {
    if (this.stopped) return;
    const now = Date.now();
    for (const worker of workers) {
      if (!this.pumps(worker.queue)) continue;
      const concurrency = Math.min(this.concurrency, worker.maxConcurrency ?? Number.POSITIVE_INFINITY);
      while ((this.inFlight.get(worker.queue) ?? 0) < concurrency) {
        const batch = this.services.sqs.receive(worker.queue, worker.batchSize, now);
        if (batch.length === 0) break;
        this.inFlight.set(worker.queue, (this.inFlight.get(worker.queue) ?? 0) + 1);
        void this.deliver(worker, batch).finally(() => {
          this.inFlight.set(worker.queue, (this.inFlight.get(worker.queue) ?? 0) - 1);
          const waiters = this.waiters;
          this.waiters = [];
          waiters.forEach((w) => w());
          this.pump();
        });
      }
    }
  }

  private async deliver(worker: Worker, batch: QueuedMessage[]): Promise<void> {
    const records: SQSRecord[] = batch.map((m) => ({
      messageId: m.messageId,
      receiptHandle: `${m.messageId}#${m.receiveCount}`,
      body: m.body,
      attributes: {
        ApproximateReceiveCount: String(m.receiveCount),
        SentTimestamp: String(m.sentAt),
        SenderId: 'local',
        ApproximateFirstReceiveTimestamp: String(m.sentAt),
      },
      messageAttributes: Object.fromEntries(
        Object.entries(m.attributes).map(([k, val]) => [k, { stringValue: val, dataType: 'String', stringListValues: [], binaryListValues: [] }]),
      ),
      md5OfBody: m.md5OfBody,
      eventSource: 'aws:sqs',
      eventSourceARN: this.services.sqs.queueArn(worker.queue),
      awsRegion: LOCAL_REGION,
    }));
    let failed: Set<string>;
    let reason = 'reported in batchItemFailures';
    try {
      const handler = await this.handler(worker);
      const response = await handler({ Records: records }, workerContext(worker));
      failed = new Set((response?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
    } catch (err) {
      reason = (err as Error)?.message ?? String(err);
      this.options.onError?.(worker.queue, err);
      failed = new Set(batch.map((m) => m.messageId));
    }
    for (const m of batch) {
      if (!failed.has(m.messageId)) continue;
      if (m.receiveCount >= worker.maxReceiveCount) {
        this.deadLetters.push({ queue: worker.queue, messageId: m.messageId, body: m.body, receiveCount: m.receiveCount, reason });
      } else {
        this.services.sqs.release(worker.queue, m, Date.now() + this.retryDelayMs);
      }
    }
  }
}
