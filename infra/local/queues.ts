/**
 * In-process queues for the local runtime and the tests. Each queue of functions/routes.ts `workers`
 * hands its worker module real SQS event shapes, in batches of the worker's batch size, honours
 * `batchItemFailures` (partial batch responses) and thrown errors by making the messages visible again
 * after a delay, and moves a message to the queue's dead-letter list after maxReceiveCount receives.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { SQSEvent, SQSRecord, SQSBatchResponse, Context } from 'aws-lambda';
import { workers, type QueueName, type Worker } from '#functions/routes.ts';
import { useLocalTransport, type EnqueueOptions } from '#shared/queue/queue.ts';

interface Pending {
  id: string;
  body: string;
  attributes: Record<string, string>;
  visibleAt: number;
  receiveCount: number;
  sentAt: number;
}

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
  /** Concurrent batches per queue (Lambda: the event source's concurrency). */
  concurrency?: number;
  /** Loads a worker module (default: import from functions/). */
  load?: (worker: Worker) => Promise<WorkerHandler>;
  onError?: (queue: QueueName, err: unknown) => void;
}

const lambdaContext = (name: string): Context => ({
  callbackWaitsForEmptyEventLoop: false,
  functionName: name,
  functionVersion: '$LATEST',
  invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${name}`,
  memoryLimitInMB: '1024',
  awsRequestId: randomUUID(),
  logGroupName: `/aws/lambda/${name}`,
  logStreamName: 'local',
  getRemainingTimeInMillis: () => 60_000,
  done: () => undefined,
  fail: () => undefined,
  succeed: () => undefined,
});

export class LocalQueues {
  readonly deadLetters: DeadLetter[] = [];
  private readonly pending = new Map<QueueName, Pending[]>();
  private readonly inFlight = new Map<QueueName, number>();
  private readonly handlers = new Map<QueueName, Promise<WorkerHandler>>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly retryDelayMs: number;
  private readonly concurrency: number;
  private waiters: (() => void)[] = [];

  constructor(private readonly options: LocalQueuesOptions = {}) {
    this.retryDelayMs = options.retryDelayMs ?? 1000;
    this.concurrency = options.concurrency ?? 4;
    for (const w of workers) {
      this.pending.set(w.queue, []);
      this.inFlight.set(w.queue, 0);
    }
  }

  /** Registers as the process's queue transport and starts pumping. */
  start(): this {
    useLocalTransport((queue, body, options) => this.send(queue, body, options));
    this.timer = setInterval(() => this.pump(), 25);
    this.timer.unref();
    return this;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    useLocalTransport(undefined);
  }

  async send(queue: QueueName, body: string, options: EnqueueOptions = {}): Promise<void> {
    const list = this.pending.get(queue);
    if (!list) throw new Error(`unknown queue ${queue}`);
    const now = Date.now();
    list.push({ id: randomUUID(), body, attributes: options.attributes ?? {}, visibleAt: now + (options.delaySeconds ?? 0) * 1000, receiveCount: 0, sentAt: now });
    queueMicrotask(() => this.pump());
  }

  /** Messages waiting or being processed, per queue. */
  depth(queue: QueueName): number {
    return (this.pending.get(queue)?.length ?? 0) + (this.inFlight.get(queue) ?? 0);
  }

  /** Resolves when every queue is empty and nothing is in flight (tests). Delayed messages count as waiting. */
  async idle(timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (workers.some((w) => this.depth(w.queue) > 0)) {
      if (Date.now() > deadline) throw new Error(`queues not idle after ${timeoutMs} ms: ${workers.map((w) => `${w.queue}=${this.depth(w.queue)}`).join(' ')}`);
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 20);
      });
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

  private pump(): void {
    if (this.stopped) return;
    const now = Date.now();
    for (const worker of workers) {
      const list = this.pending.get(worker.queue)!;
      while ((this.inFlight.get(worker.queue) ?? 0) < this.concurrency) {
        const batch: Pending[] = [];
        for (let i = 0; i < list.length && batch.length < worker.batchSize; ) {
          if (list[i].visibleAt <= now) batch.push(...list.splice(i, 1));
          else i++;
        }
        if (batch.length === 0) break;
        this.inFlight.set(worker.queue, (this.inFlight.get(worker.queue) ?? 0) + batch.length);
        void this.deliver(worker, batch).finally(() => {
          this.inFlight.set(worker.queue, (this.inFlight.get(worker.queue) ?? 0) - batch.length);
          const waiters = this.waiters;
          this.waiters = [];
          waiters.forEach((w) => w());
          this.pump();
        });
      }
    }
  }

  private async deliver(worker: Worker, batch: Pending[]): Promise<void> {
    for (const m of batch) m.receiveCount++;
    const records: SQSRecord[] = batch.map((m) => ({
      messageId: m.id,
      receiptHandle: `${m.id}#${m.receiveCount}`,
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
      md5OfBody: createHash('md5').update(m.body).digest('hex'),
      eventSource: 'aws:sqs',
      eventSourceARN: `arn:aws:sqs:us-east-1:000000000000:${worker.queue}`,
      awsRegion: 'us-east-1',
    }));
    let failed: Set<string>;
    let reason = 'reported in batchItemFailures';
    try {
      const handler = await this.handler(worker);
      const response = await handler({ Records: records }, lambdaContext(worker.queue));
      failed = new Set((response?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
    } catch (err) {
      reason = (err as Error)?.message ?? String(err);
      this.options.onError?.(worker.queue, err);
      failed = new Set(batch.map((m) => m.id));
    }
    for (const m of batch) {
      if (!failed.has(m.id)) continue;
      if (m.receiveCount >= worker.maxReceiveCount) {
        this.deadLetters.push({ queue: worker.queue, messageId: m.id, body: m.body, receiveCount: m.receiveCount, reason });
      } else {
        m.visibleAt = Date.now() + this.retryDelayMs;
        this.pending.get(worker.queue)!.push(m);
      }
    }
  }
}
