/**
 * The local SQS and EventBridge Scheduler stand-ins together, with the environment that points service code at
 * them the way a deployed function's environment points it at AWS: the SDK's own endpoint variables
 * (`AWS_ENDPOINT_URL_SQS`, `AWS_ENDPOINT_URL_SCHEDULER`, read by @aws-sdk/* itself) plus the same settings
 * infra/stack.ts gives each function (`QUEUE_URL_<NAME>`, `BROADCAST_QUEUE_ARN`, `BROADCAST_SCHEDULER_ROLE_ARN`).
 */
import { workers } from '#shared/routes.ts';
import { SchedulerStandIn } from './scheduler.ts';
import { LOCAL_ACCOUNT, SqsStandIn } from './sqs.ts';

export interface QueueServices {
  sqs: SqsStandIn;
  scheduler: SchedulerStandIn;
  /** Set these in the environment of the code that sends (process.env of the local stack or of a test file). */
  environment: Record<string, string>;
  close(): Promise<void>;
}

/** The variable infra/stack.ts names a queue's URL with. */
export const queueUrlVariable = (queue: string): string => `QUEUE_URL_${queue.toUpperCase().replace(/-/g, '_')}`;

export async function startQueueServices(ports: { sqs?: number; scheduler?: number } = {}): Promise<QueueServices> {
  const sqs = await SqsStandIn.start(workers.map((w) => w.queue), ports.sqs ?? 0);
  const scheduler = await SchedulerStandIn.start(sqs, ports.scheduler ?? 0).catch(async (err) => {
    await sqs.close();
    throw err;
  });
  const environment: Record<string, string> = {
    AWS_ENDPOINT_URL_SQS: sqs.endpoint,
    AWS_ENDPOINT_URL_SCHEDULER: scheduler.endpoint,
    BROADCAST_QUEUE_ARN: sqs.queueArn('broadcasts'),
    BROADCAST_SCHEDULER_ROLE_ARN: `arn:aws:iam::${LOCAL_ACCOUNT}:role/local-broadcast-scheduler`,
  };
  for (const w of workers) environment[queueUrlVariable(w.queue)] = sqs.queueUrl(w.queue);
  return {
    sqs,
    scheduler,
    environment,
    close: async () => {
      await scheduler.close();
      await sqs.close();
    },
  };
}
