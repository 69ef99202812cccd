/**
 * Work that runs on a clock: the outbox sweep every minute, and the role EventBridge Scheduler assumes to start a
 * broadcast at its `send_at` (the broadcast functions create one schedule per broadcast, targeting its queue).
 */
import { Duration, type Stack, aws_events as events, aws_events_targets as targets, aws_iam as iam, aws_lambda as lambda, aws_sqs as sqs } from 'aws-cdk-lib';

export function createBroadcastSchedulerRole(stack: Stack, broadcastQueue: sqs.Queue): iam.Role {
  const role = new iam.Role(stack, 'BroadcastSchedulerRole', { assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com') });
  broadcastQueue.grantSendMessages(role);
  return role;
}

/** The outbox sweep: re-publishes events whose publish was lost (a function died after its commit). */
export function scheduleOutboxSweep(stack: Stack, sweep: lambda.IFunction): void {
  const deadLetters = new sqs.Queue(stack, 'OutboxSweepDlq', {
    retentionPeriod: Duration.days(14),
    encryption: sqs.QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
  });
  new events.Rule(stack, 'OutboxSweepSchedule', {
    schedule: events.Schedule.rate(Duration.minutes(1)),
    targets: [new targets.LambdaFunction(sweep, { deadLetterQueue: deadLetters, retryAttempts: 2 })],
  });
}
