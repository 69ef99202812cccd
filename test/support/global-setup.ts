/**
 * Starts, once for the whole test run, DynamoDB Local (on a free port, with the table) and the Secrets Manager
 * stand-in holding the stack's upstream secret. Test files share them; each test makes its own business, so
 * tenancy keeps them apart. A test that rotates a secret makes its own (never the shared one).
 *
 * Also a run-wide SQS and Scheduler stand-in, so that every test file has the queue settings a deployed function
 * has. It drops what it receives (nobody in this process reads it): a test that looks at messages, or needs
 * workers to run, starts its own with test/support/queues.ts.
 *
 * And a directory where the run's synths keep their function packages (infra/bundle.ts, `BUNDLE_CACHE_DIR`): the files
 * that synthesize the stack with bundling (the infra test, the deployed-mode test) build the ~75 packages once between them.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '#infra/local/free-port.ts';
import { TEST_BUSINESS_TOKEN_PREFIX, TEST_UPSTREAM } from './upstream-secret.ts';

export default async function globalSetup() {
  const { startDynamo, ensureTable } = await import('../../infra/local/dynamo.ts');
  const port = await freePort();
  const dynamo = await startDynamo(port);
  const tableName = 'wa-crm-test';
  await ensureTable(dynamo.endpoint, tableName);
  process.env.DYNAMODB_ENDPOINT = dynamo.endpoint;
  process.env.TABLE_NAME = tableName;
  (globalThis as any).__DYNAMO__ = dynamo;

  const { startSecretsManager } = await import('../../infra/local/aws/secrets-manager.ts');
  const secretsManager = await startSecretsManager();
  process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER = secretsManager.endpoint;
  process.env.UPSTREAM_SECRET_ARN = secretsManager.putSecret('wa-crm-test/upstream', JSON.stringify(TEST_UPSTREAM));
  process.env.BUSINESS_TOKEN_SECRET_PREFIX = TEST_BUSINESS_TOKEN_PREFIX;
  (globalThis as any).__SECRETS_MANAGER__ = secretsManager;

  const { startQueueServices } = await import('../../infra/local/aws/queue-services.ts');
  const queues = await startQueueServices();
  queues.sqs.onMessage((queue) => queues.sqs.take(queue));
  Object.assign(process.env, queues.environment);
  (globalThis as any).__QUEUES__ = queues;

  process.env.BUNDLE_CACHE_DIR = mkdtempSync(join(tmpdir(), 'wa-crm-bundles-'));
}
