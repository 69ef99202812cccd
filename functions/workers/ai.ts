/**
 * The `ai` queue's worker: one job per inbound message (queued by the upstream-events worker). Each record
 * is handled on its own (Powertools partial batch responses): a provider failure or time-out fails only its
 * record, which the queue redelivers; a malformed job is logged and dropped, never retried.
 */
import { processPartialResponse } from '@aws-lambda-powertools/batch';
import { jsonBody, WorkerBatchProcessor } from '#shared/queue/worker-failures.ts';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import * as v from 'valibot';
import { aiJobSchema, handleAiJob } from '#shared/ai/agent.ts';
import { agentPorts } from '#shared/ai/ports.ts';
import { logger } from '#shared/log/logger.ts';
import { recordQueueAges } from '#shared/metrics/metrics.ts';

const recordHandler = async (record: SQSRecord): Promise<void> => {
  const job = v.safeParse(aiJobSchema, jsonBody(record));
  if (!job.success) {
    logger.error('dropping a malformed AI job', { messageId: record.messageId, issues: job.issues.map((i) => i.message) });
    return;
  }
  const outcome = await handleAiJob(job.output, agentPorts);
  logger.info('AI job handled', { businessId: job.output.businessId, conversationId: job.output.conversationId, inboundMessageId: job.output.messageId, outcome });
};

export const handler = async (event: SQSEvent, context: Context) => {
  recordQueueAges('ai', event.Records);
  // One processor per invocation: the local runtime runs several batches of one module at once.
  return processPartialResponse(event, recordHandler, new WorkerBatchProcessor(), { context, throwOnFullBatchFailure: false });
};
