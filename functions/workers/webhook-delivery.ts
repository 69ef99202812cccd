/**
 * SQS worker of the `webhook-deliveries` queue: each message is one delivery job; the batch's jobs are
 * sent in parallel, with their subscriptions read in one round trip (or taken from this container's
 * copies of a moment ago: shared/webhooks/current-subscriptions.ts), and the first attempts the fan-out
 * queued with their deliveries recorded in batched writes of those that finished together (shared/webhooks/delivery.ts).
 * Retries of a failed send are scheduled by the worker itself (delayed messages); a record fails here
 * only when the worker could not do its work (e.g. the table was unavailable), and SQS then redelivers
 * it, up to the DLQ.
 */
import { recordQueueAges } from '#shared/metrics/metrics.ts';
import { processPartialResponse } from '@aws-lambda-powertools/batch';
import { WorkerBatchProcessor } from '#shared/queue/worker-failures.ts';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import type { DeliveryJob } from '#shared/webhooks/model.ts';
import { isFirstAttempt, processDeliveryJob, processFirstAttempts } from '#shared/webhooks/delivery.ts';
import { prefetchSubscriptions } from '#shared/webhooks/current-subscriptions.ts';

export const handler = async (event: SQSEvent, context: Context) => {
  recordQueueAges('webhook-deliveries', event.Records);
  const jobs = new Map<string, DeliveryJob>();
  const again = new Set<string>();
  for (const r of event.Records) {
    try {
      jobs.set(r.messageId, JSON.parse(r.body) as DeliveryJob);
      // A job received before may have sent already: it goes through the lease like any other.
      if (r.attributes?.ApproximateReceiveCount && r.attributes.ApproximateReceiveCount !== '1') again.add(r.messageId);
    } catch {
      // A body that is not a job fails alone below and ends in the DLQ.
    }
  }
  // Before any send: the batch's subscriptions as they are now, in one read (a failed read fails the batch, to be retried).
  await prefetchSubscriptions([...jobs.values()]);
  // First attempts that carry their delivery go out together and are recorded in batched writes.
  const first = [...jobs].filter(([id, job]) => isFirstAttempt(job) && !again.has(id)).map(([, job]) => job);
  const firstDone = first.length > 0 ? processFirstAttempts(first) : Promise.resolve();
  firstDone.catch(() => undefined); // observed per record below
  // One processor per invocation: the local runtime runs several batches of one module at once.
  return processPartialResponse(event, async (r: SQSRecord) => {
    const job = jobs.get(r.messageId);
    if (!job) throw new Error('not a delivery job');
    if (isFirstAttempt(job) && !again.has(r.messageId)) await firstDone;
    else await processDeliveryJob(job);
  }, new WorkerBatchProcessor(), { context, throwOnFullBatchFailure: false });
};
