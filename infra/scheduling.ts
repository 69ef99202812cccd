/**
 * Work that runs on a clock: the functions of shared/routes.ts `scheduled` (the outbox sweep every minute), and the
 * role EventBridge Scheduler assumes to start a broadcast at its `send_at` (the broadcast functions create one
 * schedule per broadcast, targeting its queue).
 */
import { Duration, type Stack, aws_events as events, aws_events_targets as targets, aws_iam as iam, aws_lambda as lambda, aws_sqs as sqs } from 'aws-cdk-lib';
import { scheduled } from '../shared/routes.ts';
import { pascal } from './names.ts';

export function createBroadcastSchedulerRole(stack: Stack, broadcastQueue: sqs.Queue): iam.Role {
  const role = new iam.Role(stack, 'BroadcastSchedulerRole', { assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com') });
  broadcastQueue.grantSendMessages(role);
  return role;
}

/** An EventBridge rule per scheduled function, at its rate, with a dead-letter queue for the invocations that fail. */
export function scheduleFunctions(stack: Stack, functions: Map<string, lambda.IFunction>): void {
  for (const { handler, everyMinutes } of scheduled) {
    const name = pascal(handler);
    const deadLetters = new sqs.Queue(stack, `${name}Dlq`, {
      retentionPeriod: Duration.days(14),
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    new events.Rule(stack, `${name}Schedule`, {
      schedule: events.Schedule.rate(Duration.minutes(everyMinutes)),
      targets: [new targets.LambdaFunction(functions.get(handler)!, { deadLetterQueue: deadLetters, retryAttempts: 2 })],
    });
  }
}
