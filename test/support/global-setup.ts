/**
 * Starts one DynamoDB Local for the whole test run (on a free port) and creates the table.
 * Test files share it; each test makes its own business, so tenancy keeps them apart.
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
}
