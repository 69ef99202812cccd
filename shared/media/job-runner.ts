/**
 * One media job in the worker: process the file, record the outcome, and finish the send when the
 * endpoint has stopped waiting. Client-caused failures (413, bad format, unreachable link) are outcomes,
 * not retries; anything else is thrown so SQS retries it, and recorded as a failure on the last attempt.
 */
import { ApiError } from '#shared/http/errors.ts';
import { logger } from '#shared/log/logger.ts';
import { getMediaJob, mediaJobFinisher, settleMediaJob, type MediaJobOutcome } from './jobs.ts';
import { processMediaSend } from './process-media.ts';
import { invocationEnd } from '#shared/lang/invocation-end.ts';

/** What the worker keeps of its invocation, once processing has run out of time, to record the job's outcome. */
const SETTLE_RESERVE_MS = 5_000;

/** The file's processing outlasted what the invocation had left (a slow download followed by a long conversion). */
class OutOfTime extends Error {}

/**
 * `work`, or OutOfTime when the invocation would end first: Lambda stopping the worker mid-job records nothing, and a
 * job that dies so on every attempt would leave its send queued for good. What is left of the work is abandoned.
 */
function withinInvocation<T>(work: Promise<T>): Promise<T> {
  const end = invocationEnd();
  if (end === undefined) return work;
  work.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const outOfTime = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new OutOfTime('the media file was not processed within the worker\'s time')), Math.max(0, end - SETTLE_RESERVE_MS - Date.now()));
  });
  return Promise.race([work, outOfTime]).finally(() => clearTimeout(timer));
}

export async function runMediaJob(businessId: string, jobId: string, { lastAttempt }: { lastAttempt: boolean }): Promise<void> {
  const job = await getMediaJob(businessId, jobId);
  if (!job) {
    logger.warn('media job not found', { businessId, jobId });
    return;
  }
  let outcome: MediaJobOutcome | undefined = job.outcome;
  if (job.status === 'pending') {
    try {
      const prepared = await withinInvocation(processMediaSend(job.businessId, job.phoneNumberId, job.request, job.reason));
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
