/**
 * Batched reads and writes of the single table, in DynamoDB's chunk sizes (100 keys a read, 25 items a
 * write), retrying what DynamoDB leaves unprocessed with a short backoff. What is still unprocessed
 * after the last try is an error, never silently dropped.
 */
import {
  BatchGetCommand, type BatchGetCommandOutput, BatchWriteCommand, type BatchWriteCommandInput, type BatchWriteCommandOutput,
} from '@aws-sdk/lib-dynamodb';
import pLimit from 'p-limit';
import { db, table } from './client.ts';

export type WriteRequest = NonNullable<BatchWriteCommandInput['RequestItems']>[string][number];

const TRIES = 8;
const backoff = (round: number) => new Promise((r) => setTimeout(r, Math.min(1000, 20 * 2 ** round)));

/** Writes (puts and deletes) in requests of 25, `concurrency` requests at a time. */
export async function batchWriteAll(requests: WriteRequest[], { concurrency = 1 }: { concurrency?: number } = {}): Promise<void> {
  const limit = pLimit(concurrency);
  const chunks: WriteRequest[][] = [];
  for (let i = 0; i < requests.length; i += 25) chunks.push(requests.slice(i, i + 25));
  await Promise.all(chunks.map((chunk) => limit(async () => {
    let pending: WriteRequest[] | undefined = chunk;
    for (let round = 0; pending && pending.length > 0; round++) {
      if (round === TRIES) throw new Error(`batch write left ${pending.length} items unprocessed`);
      if (round > 0) await backoff(round);
      const out: BatchWriteCommandOutput = await db.send(new BatchWriteCommand({ RequestItems: { [table()]: pending } }));
      pending = out.UnprocessedItems?.[table()];
    }
  })));
}

export interface BatchGetOptions {
  /** Attributes to read (a projection expression), with the names it uses. */
  projection?: string;
  names?: Record<string, string>;
}

/** Reads items by key (strongly consistent) in requests of 100; keys that do not exist are simply absent. */
export async function batchGetAll(keyList: Record<string, unknown>[], { projection, names }: BatchGetOptions = {}): Promise<Record<string, any>[]> {
  const found: Record<string, any>[] = [];
  for (let i = 0; i < keyList.length; i += 100) {
    let pending: Record<string, unknown>[] | undefined = keyList.slice(i, i + 100);
    for (let round = 0; pending && pending.length > 0; round++) {
      if (round === TRIES) throw new Error(`batch get left ${pending.length} keys unprocessed`);
      if (round > 0) await backoff(round);
      const out: BatchGetCommandOutput = await db.send(new BatchGetCommand({
        RequestItems: { [table()]: { Keys: pending, ConsistentRead: true, ...(projection ? { ProjectionExpression: projection } : {}), ...(names ? { ExpressionAttributeNames: names } : {}) } },
      }));
      found.push(...(out.Responses?.[table()] ?? []));
      pending = out.UnprocessedKeys?.[table()]?.Keys;
    }
  }
  return found;
}
