/**
 * Media jobs: the send endpoint hands a file that needs proxying or conversion to the media worker and
 * waits for the outcome within the wait budget (decisions.md: 25 s by default). Past the budget it
 * answers 202 `queued` and hands the send over: the worker then finishes it through the job's finisher
 * (which sends the message and emits `message.sent` / `message.failed`).
 *
 * Exactly one side finishes a send: the endpoint marks the job `handedOff` only while it is pending,
 * and the worker records the outcome only while it is not handed off; whoever loses that race learns it
 * from the failed condition.
 */
import { randomUUID } from 'node:crypto';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '#shared/config.ts';
import { ANSWER_RESERVE_MS, invocationEnd } from '#shared/lang/invocation-end.ts';
import { ApiError } from '#shared/http/errors.ts';
import { enqueue } from '#shared/queue/queue.ts';
import { db, table } from '#shared/store/client.ts';
import { applied } from '#shared/store/conditional.ts';
import { keys } from '#shared/store/keys.ts';
import type { MediaJobReason, MediaSendRequest, PreparedMedia } from './send-media.ts';

export type MediaJobOutcome =
  | { status: 'done'; prepared: PreparedMedia }
  | { status: 'failed'; error: { status: number; body: Record<string, unknown> } };

export interface MediaJob {
  jobId: string;
  businessId: string;
  phoneNumberId: string;
  reason: MediaJobReason;
  request: MediaSendRequest;
  /** Registered finisher that completes the send when the endpoint has stopped waiting. */
  finisher?: string;
  /** Whatever the finisher needs (e.g. the message id and the send request), opaque here. */
  context?: Record<string, unknown>;
}

export interface MediaJobRecord extends MediaJob {
  status: 'pending' | 'done' | 'failed';
  outcome?: MediaJobOutcome;
  handedOff?: boolean;
  createdAt: string;
}

/** Jobs are kept a day for inspection, then expire. */
const JOB_TTL_SECONDS = 24 * 3600;

export async function startMediaJob(input: Omit<MediaJob, 'jobId'> & { jobId?: string }): Promise<MediaJob> {
  const jobId = input.jobId ?? randomUUID();
  const job: MediaJob = { ...input, jobId };
  await db.send(new PutCommand({
    TableName: table(),
    Item: {
      ...keys.mediaJob(job.businessId, jobId),
      type: 'mediaJob',
      ...job,
      status: 'pending',
      createdAt: new Date().toISOString(),
      ttl: Math.floor(Date.now() / 1000) + JOB_TTL_SECONDS,
    },
    ConditionExpression: 'attribute_not_exists(pk)',
  }));
  await enqueue('media', { businessId: job.businessId, jobId });
  return job;
}

export async function getMediaJob(businessId: string, jobId: string): Promise<MediaJobRecord | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: table(), Key: keys.mediaJob(businessId, jobId), ConsistentRead: true }));
  return Item as MediaJobRecord | undefined;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));


/**
 * Waits for the worker's outcome up to `budgetMs`, and never past the request's own time (less ANSWER_RESERVE_MS).
 * Undefined means the wait ended and the job is now handed off: the caller answers 202 and the worker's finisher
 * completes the send.
 */
export async function awaitMediaJob(businessId: string, jobId: string, budgetMs = config.mediaWaitBudgetMs): Promise<MediaJobOutcome | undefined> {
  const deadline = Math.min(Date.now() + budgetMs, (invocationEnd() ?? Infinity) - ANSWER_RESERVE_MS);
  let interval = 50;
  for (;;) {
    const record = await getMediaJob(businessId, jobId);
    if (record?.outcome) return record.outcome;
    if (Date.now() + interval >= deadline) break;
    await sleep(interval);
    interval = Math.min(500, Math.round(interval * 1.5));
  }
  const handedOff = await applied(db.send(new UpdateCommand({
    TableName: table(),
    Key: keys.mediaJob(businessId, jobId),
    UpdateExpression: 'SET handedOff = :t',
    ConditionExpression: '#s = :pending',
    ExpressionAttributeNames: { '#s': 'status' },
    ExpressionAttributeValues: { ':t': true, ':pending': 'pending' },
  })));
  if (handedOff) return undefined;
  // The worker finished in the meantime.
  return (await getMediaJob(businessId, jobId))?.outcome;
}

/**
 * Records the worker's outcome. Returns 'awaited' when the endpoint will pick it up, 'handed_off' when
 * the endpoint has stopped waiting (the worker must finish the send), 'settled' when it was already recorded.
 */
export async function settleMediaJob(businessId: string, jobId: string, outcome: MediaJobOutcome): Promise<'awaited' | 'handed_off' | 'settled'> {
  // Writes the outcome onto a still-pending job, under `condition` (the job's status is `#s`).
  const settle = (condition: string) => applied(db.send(new UpdateCommand({
    TableName: table(),
    Key: keys.mediaJob(businessId, jobId),
    UpdateExpression: 'SET #s = :s, outcome = :o',
    ConditionExpression: condition,
    ExpressionAttributeNames: { '#s': 'status' },
    ExpressionAttributeValues: { ':s': outcome.status, ':o': outcome, ':pending': 'pending' },
  })));
  if (await settle('#s = :pending AND attribute_not_exists(handedOff)')) return 'awaited';
  const handedOff = await settle('#s = :pending');
  return handedOff ? 'handed_off' : 'settled';
}

export type MediaJobFinisher = (job: MediaJobRecord, outcome: MediaJobOutcome) => Promise<void>;
const finishers = new Map<string, MediaJobFinisher>();

/** The area that starts jobs registers how a handed-off job is finished (imported by the media worker). */
export const registerMediaJobFinisher = (name: string, finisher: MediaJobFinisher): void => {
  finishers.set(name, finisher);
};
export const mediaJobFinisher = (name: string | undefined): MediaJobFinisher | undefined => (name ? finishers.get(name) : undefined);

/** An outcome's error as the ApiError the endpoint throws. */
export const outcomeError = (outcome: Extract<MediaJobOutcome, { status: 'failed' }>) => new ApiError(outcome.error.status, outcome.error.body);

/**
 * For the send path: prepares media through the worker within the budget. `ready` carries the prepared
 * media; `queued` means the job was handed off (answer 202); a failure is thrown as its ApiError.
 */
export async function prepareThroughWorker(
  job: Omit<MediaJob, 'jobId'> & { jobId?: string },
  budgetMs = config.mediaWaitBudgetMs,
): Promise<{ status: 'ready'; prepared: PreparedMedia; jobId: string } | { status: 'queued'; jobId: string }> {
  const started = await startMediaJob(job);
  const outcome = await awaitMediaJob(started.businessId, started.jobId, budgetMs);
  if (!outcome) return { status: 'queued', jobId: started.jobId };
  if (outcome.status === 'failed') throw outcomeError(outcome);
  return { status: 'ready', prepared: outcome.prepared, jobId: started.jobId };
}
