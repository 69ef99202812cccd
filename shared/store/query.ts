/**
 * Reads every page of a query (lib-dynamodb's paginator), for the small, bounded collections that are
 * read whole: a business's agents, stages, subscriptions, a segment's usage; and one page of an index
 * partition, for the lists that page with a cursor and the lookups by a pointer.
 */
import { paginateQuery, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { db, table } from './client.ts';

export async function queryAll<T = Record<string, unknown>>(input: Omit<QueryCommandInput, 'TableName'>): Promise<T[]> {
  const items: T[] = [];
  for await (const page of paginateQuery({ client: db }, { TableName: table(), ...input })) {
    for (const item of page.Items ?? []) items.push(item as T);
  }
  return items;
}

/** How many items a query matches (after its filter), over every page. */
export async function queryCount(input: Omit<QueryCommandInput, 'TableName' | 'Select'>): Promise<number> {
  let count = 0;
  for await (const page of paginateQuery({ client: db }, { TableName: table(), ...input, Select: 'COUNT' })) count += page.Count ?? 0;
  return count;
}

/** Every item of partition `pk` whose sort key starts with `skPrefix`. */
export const queryPrefix = <T = Record<string, unknown>>(pk: string, skPrefix: string, consistent = false): Promise<T[]> =>
  queryAll<T>({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': pk, ':prefix': skPrefix },
    ConsistentRead: consistent,
  });

/**
 * One page of index gsi1's partition `gsi1pk` (eventually consistent, as every index read), in sort-key order
 * or, with `newestFirst`, the reverse.
 */
export async function queryIndexPage<T = Record<string, any>>(
  gsi1pk: string, { limit, newestFirst = false, startKey }: { limit?: number; newestFirst?: boolean; startKey?: Record<string, unknown> } = {},
): Promise<{ items: T[]; lastKey: Record<string, unknown> | undefined }> {
  const page = await db.send(new QueryCommand({
    TableName: table(),
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeValues: { ':pk': gsi1pk },
    ...(newestFirst ? { ScanIndexForward: false } : {}),
    Limit: limit,
    ExclusiveStartKey: startKey,
  }));
  return { items: (page.Items ?? []) as T[], lastKey: page.LastEvaluatedKey };
}
