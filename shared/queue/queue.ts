/**
 * The queue port. In AWS a message goes to SQS (queue URL from QUEUE_URL_<NAME>); in the local runtime
 * and in tests to an in-process transport that hands worker handlers real SQS event shapes
 * (infra/local/queues.ts). Without a registered transport, local messages are kept in `localOutbox`
 * so that tests can inspect them.
 */
import { SQSClient, SendMessageCommand } from '@aws-sdk/client-sqs';
import { config, queueUrl } from '#shared/config.ts';
import type { QueueName } from '#functions/routes.ts';

export interface EnqueueOptions {
  delaySeconds?: number;
  /** Message attributes (string values) carried to the worker. */
  attributes?: Record<string, string>;
}

export type LocalTransport = (queue: QueueName, body: string, options: EnqueueOptions) => Promise<void>;

let localTransport: LocalTransport | undefined;
export const localOutbox: { queue: QueueName; body: string; options: EnqueueOptions }[] = [];

export const useLocalTransport = (transport: LocalTransport | undefined): void => {
  localTransport = transport;
};

let sqs: SQSClient | undefined;

export async function enqueue(queue: QueueName, message: unknown, options: EnqueueOptions = {}): Promise<void> {
  const body = typeof message === 'string' ? message : JSON.stringify(message);
  if (config.localQueues || !queueUrl(queue)) {
    if (localTransport) return localTransport(queue, body, options);
    localOutbox.push({ queue, body, options });
    return;
  }
  sqs ??= new SQSClient({ region: config.region });
  await sqs.send(new SendMessageCommand({
    QueueUrl: queueUrl(queue),
    MessageBody: body,
    DelaySeconds: options.delaySeconds ? Math.min(900, Math.max(0, Math.round(options.delaySeconds))) : undefined,
    MessageAttributes: options.attributes
      ? Object.fromEntries(Object.entries(options.attributes).map(([k, val]) => [k, { DataType: 'String', StringValue: val }]))
      : undefined,
  }));
}
