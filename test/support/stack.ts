/**
 * The local stack as the e2e tests start it: free ports, the run's one DynamoDB Local (globalSetup), no console
 * output, and no clock. Every test file of the run shares one table: the outbox sweep in this process would
 * re-publish the other files' old outbox items (events still held by a lane, or by a receiver that is gone) and
 * deliver them from this stack's queues, whose `idle()` would then wait for retries that are not this file's; and
 * it would fail their sends in flight. The sweeps are tested in tables of their own (test/support/table.ts), the
 * clock in test/e2e/clock.test.ts.
 */
import { startLocalStack, type LocalStack, type LocalStackOptions } from '#infra/local/stack.ts';

export type { LocalStack };

export const startTestStack = (options: LocalStackOptions = {}): Promise<LocalStack> =>
  startLocalStack({ port: 0, sandboxPort: 0, dynamodbEndpoint: process.env.DYNAMODB_ENDPOINT, quiet: true, clock: false, ...options });
