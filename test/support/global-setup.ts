/**
 * Starts one DynamoDB Local for the whole test run (on a free port) and creates the table.
 * Test files share it; each test makes its own business, so tenancy keeps them apart.
 *
 * Also a run-wide SQS and Scheduler stand-in, so that every test file has the queue settings a deployed function
 * has. It drops what it receives (nobody in this process reads it): a test that looks at messages, or needs
 * workers to run, starts its own with test/support/queues.ts.
 */
import { freePort } from './http.ts';

export default async function globalSetup() {
  const { startDynamo, ensureTable } = await import('../../infra/local/dynamo.ts');
  const port = await freePort();
  const dynamo = await startDynamo(port);
  const tableName = 'wa-crm-test';
  await ensureTable(dynamo.endpoint, tableName);
  process.env.DYNAMODB_ENDPOINT = dynamo.endpoint;
  process.env.TABLE_NAME = tableName;
  (globalThis as any).__DYNAMO__ = dynamo;

  const { startQueueServices } = await import('../../infra/local/aws/queue-services.ts');
  const queues = await startQueueServices();
  queues.sqs.onMessage((queue) => queues.sqs.take(queue));
  Object.assign(process.env, queues.environment);
  (globalThis as any).__QUEUES__ = queues;
}
