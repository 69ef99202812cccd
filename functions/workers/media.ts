/**
 * SQS worker of the `media` queue, the only function that bundles sharp and ffmpeg: downloads, probes
 * and converts the files of media sends (shared/media/job-runner.ts). Failed records are reported as
 * partial batch failures; after maxReceiveCount they go to the DLQ, and the last attempt records the
 * job as failed so that a waiting send or its finisher learns the outcome.
 */
import { recordQueueAges } from '#shared/metrics/metrics.ts';
import { processPartialResponse } from '@aws-lambda-powertools/batch';
import { WorkerBatchProcessor } from '#shared/queue/worker-failures.ts';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { workers } from '#shared/routes.ts';
import { runMediaJob } from '#shared/media/job-runner.ts';
import { withInvocationEnd } from '#shared/lang/invocation-end.ts';
import { registerOutboundFinisher } from '#shared/media/outbound-finisher.ts';

// How a send handed over past the wait budget is completed.
registerOutboundFinisher();

const maxReceiveCount = workers.find((w) => w.queue === 'media')?.maxReceiveCount ?? 3;

export const handler = async (event: SQSEvent, context: Context) => {
  recordQueueAges('media', event.Records);
  const processor = new WorkerBatchProcessor();
  const record = async (r: SQSRecord) => {
    const { businessId, jobId } = JSON.parse(r.body) as { businessId: string; jobId: string };
    const receiveCount = Number(r.attributes?.ApproximateReceiveCount ?? '1');
    // Processing stops in time to record the job's outcome before the invocation ends (its last attempt: failed).
    await withInvocationEnd(context.getRemainingTimeInMillis(), () => runMediaJob(businessId, jobId, { lastAttempt: receiveCount >= maxReceiveCount }));
  };
  return processPartialResponse(event, record, processor, { context, throwOnFullBatchFailure: false });
};
