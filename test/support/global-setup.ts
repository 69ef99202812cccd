/**
 * Starts, once for the whole test run, DynamoDB Local (on a free port, with the table) and the Secrets Manager
 * stand-in holding the stack's upstream secret. Test files share them; each test makes its own business, so
 * tenancy keeps them apart. A test that rotates a secret makes its own (never the shared one).
 */
import { freePort } from './http.ts';
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
}
