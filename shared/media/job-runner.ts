/**
 * One media job in the worker: process the file, record the outcome, and finish the send when the
 * endpoint has stopped waiting. Client-caused failures (413, bad format, unreachable link) are outcomes,
 * not retries; anything else is thrown so SQS retries it, and recorded as a failure on the last attempt.
 */
import { ApiError } from '#shared/http/errors.ts';
import { logger } from '#shared/log/logger.ts';
import { getMediaJob, mediaJobFinisher, settleMediaJob, type MediaJobOutcome } from './jobs.ts';
import { processMediaSend } from './process-media.ts';

export async function runMediaJob(businessId: string, jobId: string, { lastAttempt }: { lastAttempt: boolean }): Promise<void> {
  const job = await getMediaJob(businessId, jobId);
  if (!job) {
    logger.warn('media job not found', { businessId, jobId });
    return;
  }
  let outcome: MediaJobOutcome | undefined = job.outcome;
  if (job.status === 'pending') {
    try {
      const prepared = await processMediaSend(job.businessId, job.phoneNumberId, job.request, job.reason);
      outcome = { status: 'done', prepared };
    } catch (err) {
      if (err instanceof ApiError && err.status < 500) {
        outcome = { status: 'failed', error: { status: err.status, body: err.body } };
      } else if (lastAttempt) {
        logger.error('media job failed on its last attempt', { jobId, error: err as Error });
        outcome = { status: 'failed', error: { status: 502, body: { error: 'media_processing_failed', message: 'The media file could not be processed; try again later' } } };
      } else {
        throw err;
      }
    }
    const settled = await settleMediaJob(businessId, jobId, outcome);
    if (settled !== 'handed_off') return;
  } else if (!job.handedOff) {
    return;
  }
  // Handed off (now, or on an earlier attempt that died before finishing): complete the send here.
  const finisher = mediaJobFinisher(job.finisher);
  if (!finisher) {
    if (job.finisher) logger.error('no finisher registered for a handed-off media job', { jobId, finisher: job.finisher });
    return;
  }
  await finisher({ ...job, outcome }, outcome!);
}
