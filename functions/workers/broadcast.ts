/**
 * The `broadcasts` queue worker: starts broadcasts (freezing their audience) and runs them (paced sends,
 * cancellation sweeps, completion). A message that fails is retried by the queue; the per-recipient claims make
 * a retry safe.
 */
import { recordQueueAges } from '#shared/metrics/metrics.ts';
import { processPartialResponse } from '@aws-lambda-powertools/batch';
import { jsonBody, WorkerBatchProcessor } from '#shared/queue/worker-failures.ts';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { logger } from '#shared/log/logger.ts';
import { isBroadcastMessage } from '#shared/broadcasts/messages.ts';
import { handleBroadcastMessage } from '#shared/broadcasts/runner.ts';


const record = async (r: SQSRecord): Promise<void> => {
  const msg = jsonBody(r);
  if (!isBroadcastMessage(msg)) {
    // A malformed message would fail forever: drop it, loudly.
    logger.error('dropping a malformed broadcasts message', { body: r.body.slice(0, 500) });
    return;
  }
  logger.appendKeys({ broadcastId: msg.broadcastId });
  await handleBroadcastMessage(msg, Number(r.attributes?.ApproximateReceiveCount ?? 1));
};

export const handler = async (event: SQSEvent, context: Context) => {
  recordQueueAges('broadcasts', event.Records);
  // One processor per invocation: the local runtime runs several batches of one module at once.
  return processPartialResponse(event, record, new WorkerBatchProcessor(), { context, throwOnFullBatchFailure: false });
};
