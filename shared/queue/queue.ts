/**
 * The queue port: `enqueue` sends one message to one SQS queue through @aws-sdk/client-sqs, everywhere. The
 * local runtime and the tests stand in for SQS at the client's endpoint (`AWS_ENDPOINT_URL_SQS`, which the SDK
 * reads itself; infra/local/aws/sqs.ts), so there is no other transport and no local branch here.
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

export async function enqueue(queue: QueueName, message: unknown, options: EnqueueOptions = {}): Promise<void> {
  const url = queueUrl(queue);
  const { sqs, SendMessageCommand } = await sdk();
  await sqs.send(new SendMessageCommand({
    QueueUrl: url,
    MessageBody: typeof message === 'string' ? message : JSON.stringify(message),
    DelaySeconds: options.delaySeconds ? Math.min(SQS_MAX_DELAY_SECONDS, Math.max(0, Math.ceil(options.delaySeconds))) : undefined,
    MessageAttributes: options.attributes
      ? Object.fromEntries(Object.entries(options.attributes).map(([k, val]) => [k, { DataType: 'String', StringValue: val }]))
      : undefined,
  }));
}
