/**
 * Queues for one test file: the SQS and Scheduler stand-ins (infra/local/aws/) in this file's process, with this
 * file's environment pointed at them (jest gives each test file its own copy of process.env). Service code sends
 * through @aws-sdk/client-sqs over HTTP as it does in AWS; tests read what the stand-in received.
 *
 * - `startQueues(options)`: the stand-ins plus the pump that runs the worker modules (LocalQueues).
 * - `startQueueSink()`: the stand-ins without a pump; messages stay queued until the test takes them.
 * Files that need neither get the run-wide sink of global-setup.ts.
 */
import type { QueueName } from '#shared/queue/queue.ts';
import type { QueueServices } from '#infra/local/aws/queue-services.ts';
import type { LocalQueues, LocalQueuesOptions } from '#infra/local/queues.ts';

async function startServices(): Promise<QueueServices> {
  const { startQueueServices } = await import('#infra/local/aws/queue-services.ts');
  const services = await startQueueServices();
  Object.assign(process.env, services.environment);
  return services;
}

export async function startQueues(options: LocalQueuesOptions = {}): Promise<LocalQueues> {
  const { LocalQueues } = await import('#infra/local/queues.ts');
  return new LocalQueues(await startServices(), options).start();
}

export interface QueueSink extends QueueServices {
  /** Bodies of the messages waiting in `queue`, oldest first, JSON-parsed. */
  bodies(queue: QueueName): any[];
  /** Removes and answers the messages waiting in `queue` (raw bodies), oldest first. */
  takeBodies(queue: QueueName): string[];
}

export async function startQueueSink(): Promise<QueueSink> {
  const services = await startServices();
  return {
    ...services,
    bodies: (queue) => services.sqs.messages(queue).map((m) => JSON.parse(m.body)),
    takeBodies: (queue) => services.sqs.take(queue).map((m) => m.body),
  };
}
