/**
 * The table as tests see it: a table of a test's own, and every item of a table (a Scan, all of its pages).
 * Service modules are imported on use: a test file sets its environment after its static imports run.
 */
import type { ScanCommandInput } from '@aws-sdk/lib-dynamodb';

/**
 * Runs `work` against a table of its own, created for it in the run's DynamoDB Local. For tests of the table-wide
 * sweeps (the outbox sweep, the sweep of unconfirmed sends) and of whole-table reads: every test file of the run
 * shares one table, so a sweep there acts on what the other files have in flight or left behind (it published
 * thousands of their outbox items into one file's queues, and failed another file's sends in the middle of its
 * load test). Service code reads TABLE_NAME on every use, so whatever `work` calls in-process uses the new table.
 */
export async function inOwnTable<T>(work: () => Promise<T>): Promise<T> {
  const shared = process.env.TABLE_NAME;
  const own = `own-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
  process.env.TABLE_NAME = own;
  try {
    const { ensureTable } = await import('#infra/local/dynamo.ts');
    await ensureTable(process.env.DYNAMODB_ENDPOINT!, own);
    return await work();
  } finally {
    process.env.TABLE_NAME = shared;
  }
}

/** Every item of the current table that `filter` keeps: every page of the Scan (one page reads at most 1 MB). */
export async function scanTable(filter: Pick<ScanCommandInput, 'FilterExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'> = {}): Promise<Record<string, unknown>[]> {
  const { ScanCommand } = await import('@aws-sdk/lib-dynamodb');
  const { db, table } = await import('#shared/store/client.ts');
  const items: Record<string, unknown>[] = [];
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const page = await db.send(new ScanCommand({ TableName: table(), ...filter, ExclusiveStartKey }));
    items.push(...(page.Items ?? []));
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  return items;
}
