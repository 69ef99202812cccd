/**
 * The queue port: `enqueue` sends one message, `enqueueAll` many in batches, to one SQS queue through
 * @aws-sdk/client-sqs, everywhere. The local runtime and the tests stand in for SQS at the client's endpoint
 * (`AWS_ENDPOINT_URL_SQS`, which the SDK reads itself; infra/local/aws/sqs.ts), so there is no other transport and
 * no local branch here.
 *
 * Each queue's URL comes from its own variable, written out below as a literal so that the infra test finds it in
 * every bundle that sends to that queue. A missing URL is a `ConfigurationError` on the first send: the request or
 * worker that wanted to send fails loudly instead of losing the message.
 *
 * What a failed send means, per caller (each either fails the work that wanted the message, or is covered):
 * - `events` (shared/events/outbox.ts `publish`): covered by the outbox. The event's outbox item was written with the
 *   state change; the scheduled sweep publishes it again. A missing queue URL is not covered (the sweep has the same
 *   environment): `commit` checks it before writing, so the request fails before any state changes.
 * - `upstream-events` (functions/http/upstream/receive.ts): fails the webhook request (5xx), so Meta redelivers.
 * - `media` (shared/media/jobs.ts): fails the send that needed the job.
 * - `ai` (shared/messages/inbound.ts): fails the upstream-events record; its redelivery finds the message stored and
 *   asks the AI again (the agent answers a message once). (shared/ai/agent.ts): fails the AI record, retried by SQS.
 * - `webhook-deliveries` (shared/webhooks/fanout.ts, delivery.ts, service.ts): fails the fan-out or delivery record
 *   (retried by SQS), or the redeliver request.
 * - `broadcasts` (shared/broadcasts/messages.ts, start.ts: the worker's runs and early starts): fails the worker's
 *   record (retried by SQS). (shared/broadcasts/service.ts, an immediate start): a missing URL fails the create
 *   request before anything is stored; a send that still fails after the SDK's retries fails the request (500), but
 *   the stored broadcast stays `running` without a start message (not covered yet: nothing re-queues it).
 * - Scheduled broadcast starts go through EventBridge Scheduler (shared/broadcasts/scheduler.ts): a failed
 *   CreateSchedule fails the create request before the broadcast is stored.
 */
import type { SendMessageBatchRequestEntry } from '@aws-sdk/client-sqs';
import { onFirstUse } from '#shared/lang/on-first-use.ts';
import { requiredEnv } from '#shared/settings/env.ts';

/** Each queue and the variable that holds its URL (infra/stack.ts sets one per queue of shared/routes.ts `workers`). */
const queueUrls = {
  'upstream-events': () => requiredEnv('QUEUE_URL_UPSTREAM_EVENTS'),
  events: () => requiredEnv('QUEUE_URL_EVENTS'),
  'webhook-deliveries': () => requiredEnv('QUEUE_URL_WEBHOOK_DELIVERIES'),
  media: () => requiredEnv('QUEUE_URL_MEDIA'),
  ai: () => requiredEnv('QUEUE_URL_AI'),
  broadcasts: () => requiredEnv('QUEUE_URL_BROADCASTS'),
} satisfies Record<string, () => string>;

export type QueueName = keyof typeof queueUrls;

/** The queue's URL; throws `ConfigurationError` naming the variable when it is not set. */
export const queueUrl = (queue: QueueName): string => queueUrls[queue]();

export interface EnqueueOptions {
  /** Rounded to whole seconds and kept within SQS's 0–900. */
  delaySeconds?: number;
  /** Message attributes (string values) carried to the worker. */
  attributes?: Record<string, string>;
}

const SQS_MAX_DELAY_SECONDS = 900;

const sdk = onFirstUse(() => import('./sqs-client.ts'));

/** A message as SQS takes it: the body (JSON unless a string), a delay within 0–900 whole seconds, String attributes. */
const entry = (message: unknown, options: EnqueueOptions = {}) => ({
  MessageBody: typeof message === 'string' ? message : JSON.stringify(message),
  DelaySeconds: options.delaySeconds ? Math.min(SQS_MAX_DELAY_SECONDS, Math.max(0, Math.ceil(options.delaySeconds))) : undefined,
  MessageAttributes: options.attributes
    ? Object.fromEntries(Object.entries(options.attributes).map(([k, val]) => [k, { DataType: 'String', StringValue: val }]))
    : undefined,
});

export async function enqueue(queue: QueueName, message: unknown, options: EnqueueOptions = {}): Promise<void> {
  const url = queueUrl(queue);
  const { sqs, SendMessageCommand } = await sdk();
  await sqs.send(new SendMessageCommand({ QueueUrl: url, ...entry(message, options) }));
}

export interface Outgoing {
  message: unknown;
  options?: EnqueueOptions;
}

/** Some messages of an `enqueueAll` were not queued (the others were): their positions, and the causes. */
export class QueueBatchError extends Error {
  constructor(readonly queue: QueueName, readonly failed: number[], readonly causes: unknown[]) {
    super(`${failed.length} message(s) not sent to ${queue}: ${causes.map((c) => (c instanceof Error ? c.message : String(c))).join('; ')}`);
    this.name = 'QueueBatchError';
  }
}

/** SQS's limits per SendMessageBatch request (a literal: an expression would keep this module in every bundle). */
const BATCH_ENTRIES = 10;
const BATCH_BYTES = 1_048_576;
/** SQS's limit on one message (body and attributes). */
export const MAX_MESSAGE_BYTES = 1_048_576;

const entryBytes = (e: SendMessageBatchRequestEntry) =>
  Buffer.byteLength(e.MessageBody ?? '') + Object.entries(e.MessageAttributes ?? {}).reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v.StringValue ?? '') + 'String'.length, 0);

/**
 * Sends many messages to one queue in SendMessageBatch requests (at most 10 entries and 1 MiB each), in
 * parallel: ten messages cost one request instead of ten. Every request is tried; if any message was not
 * queued (a failed request or a failed entry), it rejects with a `QueueBatchError` naming those messages.
 */
export async function enqueueAll(queue: QueueName, messages: Outgoing[]): Promise<void> {
  if (messages.length === 0) return;
  const url = queueUrl(queue);
  const chunks: { index: number; entry: SendMessageBatchRequestEntry }[][] = [];
  let chunk: (typeof chunks)[number] = [];
  let bytes = 0;
  messages.forEach(({ message, options }, index) => {
    const e = { Id: String(index), ...entry(message, options) };
    const size = entryBytes(e);
    if (chunk.length === BATCH_ENTRIES || (chunk.length > 0 && bytes + size > BATCH_BYTES)) {
      chunks.push(chunk);
      chunk = [];
      bytes = 0;
    }
    chunk.push({ index, entry: e });
    bytes += size;
  });
  chunks.push(chunk);
  const failed: number[] = [];
  const causes: unknown[] = [];
  const { sqs, SendMessageBatchCommand } = await sdk();
  await Promise.all(chunks.map(async (c) => {
    try {
      const out = await sqs.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: c.map((x) => x.entry) }));
      for (const f of out.Failed ?? []) {
        failed.push(Number(f.Id));
        causes.push(`${f.Code}: ${f.Message}`);
      }
    } catch (err) {
      failed.push(...c.map((x) => x.index));
      causes.push(err);
    }
  }));
  if (failed.length > 0) throw new QueueBatchError(queue, failed.sort((a, b) => a - b), causes);
}
