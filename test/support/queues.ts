/**
 * Queues for one test file: the SQS and Scheduler stand-ins (infra/local/aws/) in this file's process, with this
 * file's environment pointed at them (jest gives each test file its own copy of process.env). Service code sends
 * through @aws-sdk/client-sqs over HTTP as it does in AWS; tests read what the stand-in received.
 *
 * - `startQueues(options)`: the stand-ins plus the pump that runs the worker modules (LocalQueues).
 * - `startQueueSink()`: the stand-ins without a pump; messages stay queued until the test takes them.
 * - `eventSink()`: a sink for a whole test file, to read the domain events its requests emitted.
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

/**
 * For a test file that checks the domain events its requests emit: a sink started before the file's tests and closed
 * after them; `eventsOf` answers a business's events of one name, as the events queue received them, oldest first.
 */
export function eventSink(): { eventsOf: (businessId: string, name: string) => any[] } {
  let sink: QueueSink | undefined;
  beforeAll(async () => {
    sink = await startQueueSink();
  });
  afterAll(() => sink?.close());
  return { eventsOf: (businessId, name) => sink!.bodies('events').filter((e) => e.businessId === businessId && e.event === name) };
}
