/**
 * The scheduling port: starts a broadcast at its `send_at`, through @aws-sdk/client-scheduler everywhere (the local
 * runtime and the tests stand in for EventBridge Scheduler at the client's endpoint, `AWS_ENDPOINT_URL_SCHEDULER`;
 * infra/local/aws/scheduler.ts).
 *
 * One one-time schedule per broadcast (`at(...)`, UTC, deleted after it fires) whose target is the `broadcasts`
 * queue with the start message as input. Needs BROADCAST_QUEUE_ARN and BROADCAST_SCHEDULER_ROLE_ARN (a role
 * EventBridge Scheduler assumes, allowed sqs:SendMessage on that queue): without them scheduling is a
 * `ConfigurationError` (the request fails loudly; there is no in-process fallback a Lambda would lose).
 * BROADCAST_SCHEDULE_GROUP is optional (default `default`). The function needs scheduler:CreateSchedule,
 * scheduler:UpdateSchedule, scheduler:DeleteSchedule and iam:PassRole on that role.
 *
 * Firing early or twice is harmless: the start step checks the broadcast's status and `send_at` itself.
 */
import type { CreateScheduleCommandInput } from '@aws-sdk/client-scheduler';
import { onFirstUse } from '#shared/lang/on-first-use.ts';
import { optionalEnv, requiredEnv } from '#shared/settings/env.ts';
import type { BroadcastMessage } from './messages.ts';

const group = () => optionalEnv('BROADCAST_SCHEDULE_GROUP') ?? 'default';
const scheduleName = (broadcastId: string) => `broadcast-${broadcastId}`;

const sdk = onFirstUse(() => import('./scheduler-client.ts'));

/** `at()` takes whole seconds: round up so that the start never fires before `send_at`. */
const atExpression = (at: Date) => `at(${new Date(Math.ceil(at.getTime() / 1000) * 1000).toISOString().slice(0, 19)})`;

export async function scheduleStart(businessId: string, broadcastId: string, at: Date): Promise<void> {
  const message: BroadcastMessage = { type: 'start', businessId, broadcastId };
  const input: CreateScheduleCommandInput = {
    Name: scheduleName(broadcastId),
    GroupName: group(),
    ScheduleExpression: atExpression(at),
    ScheduleExpressionTimezone: 'UTC',
    FlexibleTimeWindow: { Mode: 'OFF' },
    ActionAfterCompletion: 'DELETE',
    Target: {
      Arn: requiredEnv('BROADCAST_QUEUE_ARN'),
      RoleArn: requiredEnv('BROADCAST_SCHEDULER_ROLE_ARN'),
      Input: JSON.stringify(message),
      RetryPolicy: { MaximumRetryAttempts: 10 },
    },
  };
  const { scheduler, ConflictException, CreateScheduleCommand, UpdateScheduleCommand } = await sdk();
  try {
    await scheduler.send(new CreateScheduleCommand(input));
  } catch (err) {
    if (!(err instanceof ConflictException)) throw err;
    await scheduler.send(new UpdateScheduleCommand(input));
  }
}

export async function cancelStart(broadcastId: string): Promise<void> {
  const { scheduler, DeleteScheduleCommand, ResourceNotFoundException } = await sdk();
  try {
    await scheduler.send(new DeleteScheduleCommand({ Name: scheduleName(broadcastId), GroupName: group() }));
  } catch (err) {
    if (!(err instanceof ResourceNotFoundException)) throw err;
  }
}
