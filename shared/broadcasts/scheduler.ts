/**
 * The scheduling port: starts a broadcast at its `send_at`.
 *
 * - AWS: one EventBridge Scheduler one-time schedule per broadcast (`at(...)`, UTC, deleted after it fires)
 *   whose target is the `broadcasts` queue with the start message as input. Needs BROADCAST_QUEUE_ARN,
 *   BROADCAST_SCHEDULER_ROLE_ARN (a role EventBridge Scheduler assumes, allowed sqs:SendMessage on that queue)
 *   and optionally BROADCAST_SCHEDULE_GROUP (default `default`). The function needs scheduler:CreateSchedule,
 *   scheduler:UpdateSchedule, scheduler:DeleteSchedule and iam:PassRole on that role.
 * - Local runtime and tests (LOCAL_QUEUES=1 or no scheduler configured): an in-process timer that enqueues the
 *   same start message. Timers do not survive a restart of the local stack; neither do its in-process queues.
 *
 * Firing early or twice is harmless: the start step checks the broadcast's status and `send_at` itself.
 */
import {
  ConflictException, CreateScheduleCommand, DeleteScheduleCommand, ResourceNotFoundException, SchedulerClient, UpdateScheduleCommand,
  type CreateScheduleCommandInput,
} from '@aws-sdk/client-scheduler';
import { config } from '#shared/config.ts';
import { enqueue } from '#shared/queue/queue.ts';
import { logger } from '#shared/log/logger.ts';
import type { BroadcastMessage } from './messages.ts';

const queueArn = process.env.BROADCAST_QUEUE_ARN;
const roleArn = process.env.BROADCAST_SCHEDULER_ROLE_ARN;
const group = process.env.BROADCAST_SCHEDULE_GROUP || 'default';
const useAws = !config.localQueues && Boolean(queueArn && roleArn);

const scheduleName = (broadcastId: string) => `broadcast-${broadcastId}`;

// ---- local timers ----------------------------------------------------------------------------------------
const MAX_TIMER_MS = 2 ** 31 - 1;
const timers = new Map<string, NodeJS.Timeout>();

function arm(broadcastId: string, atMs: number, fire: () => void): void {
  const wait = atMs - Date.now();
  const t = setTimeout(() => (wait > MAX_TIMER_MS ? arm(broadcastId, atMs, fire) : (timers.delete(broadcastId), fire())), Math.max(0, Math.min(wait, MAX_TIMER_MS)));
  t.unref();
  timers.set(broadcastId, t);
}

// ---- AWS -------------------------------------------------------------------------------------------------
let client: SchedulerClient | undefined;
const scheduler = () => (client ??= new SchedulerClient({ region: config.region }));

/** `at()` takes whole seconds: round up so that the start never fires before `send_at`. */
const atExpression = (at: Date) => `at(${new Date(Math.ceil(at.getTime() / 1000) * 1000).toISOString().slice(0, 19)})`;

export async function scheduleStart(businessId: string, broadcastId: string, at: Date): Promise<void> {
  const message: BroadcastMessage = { type: 'start', businessId, broadcastId };
  if (!useAws) {
    clearTimeout(timers.get(broadcastId));
    arm(broadcastId, at.getTime(), () => {
      enqueue('broadcasts', message).catch((err) => logger.error('scheduled broadcast start not enqueued', { broadcastId, error: err as Error }));
    });
    return;
  }
  const input: CreateScheduleCommandInput = {
    Name: scheduleName(broadcastId),
    GroupName: group,
    ScheduleExpression: atExpression(at),
    ScheduleExpressionTimezone: 'UTC',
    FlexibleTimeWindow: { Mode: 'OFF' },
    ActionAfterCompletion: 'DELETE',
    Target: { Arn: queueArn!, RoleArn: roleArn!, Input: JSON.stringify(message), RetryPolicy: { MaximumRetryAttempts: 10 } },
  };
  try {
    await scheduler().send(new CreateScheduleCommand(input));
  } catch (err) {
    if (!(err instanceof ConflictException)) throw err;
    await scheduler().send(new UpdateScheduleCommand(input));
  }
}

export async function cancelStart(broadcastId: string): Promise<void> {
  if (!useAws) {
    clearTimeout(timers.get(broadcastId));
    timers.delete(broadcastId);
    return;
  }
  try {
    await scheduler().send(new DeleteScheduleCommand({ Name: scheduleName(broadcastId), GroupName: group }));
  } catch (err) {
    if (!(err instanceof ResourceNotFoundException)) throw err;
  }
}
