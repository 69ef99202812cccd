/**
 * Reads every page of a query (lib-dynamodb's paginator), for the collections that are read whole: a
 * business's agents, stages, subscriptions, a segment's usage or members; one page of a list that pages with a
 * cursor; and the first items of an index partition, for the lookups by a pointer.
 */
import { paginateQuery, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { db, table } from './client.ts';

/**
 * The page size of every read that walks a partition or an index partition whole. DynamoDB caps a page at 1 MB
 * anyway; a bounded page keeps each response small in AWS (the same RCU, a few more round trips for the longest
 * reads), and DynamoDB Local needs it: without a Limit, each page there costs in proportion to what is left of
 * the partition (measured on 60,000 items: 36 s without a Limit, 2.5 s with 1,000), so a whole read was
 * quadratic in the partition's size.
 */
export const QUERY_PAGE = 1000;

/** Every item a query matches, over every page (at most QUERY_PAGE items each, unless the input sets Limit). */
export async function queryAll<T = Record<string, unknown>>(input: Omit<QueryCommandInput, 'TableName'>): Promise<T[]> {
  const items: T[] = [];
  for await (const page of paginateQuery({ client: db }, { TableName: table(), Limit: QUERY_PAGE, ...input })) {
    for (const item of page.Items ?? []) items.push(item as T);
  }
  return items;
}

/** How many items a query matches (after its filter), over every page. */
export async function queryCount(input: Omit<QueryCommandInput, 'TableName' | 'Select'>): Promise<number> {
  let count = 0;
  for await (const page of paginateQuery({ client: db }, { TableName: table(), Limit: QUERY_PAGE, ...input, Select: 'COUNT' })) count += page.Count ?? 0;
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
 * The first items of index gsi1's partition `gsi1pk` in sort-key order (eventually consistent, as every index read):
 * the lookups by a pointer, and a broadcast's next recipients to send.
 */
export async function queryIndexPage<T = Record<string, any>>(gsi1pk: string, { limit }: { limit?: number } = {}): Promise<{ items: T[] }> {
  const page = await db.send(new QueryCommand({
    TableName: table(),
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeValues: { ':pk': gsi1pk },
    Limit: limit,
  }));
  return { items: (page.Items ?? []) as T[] };
}

/**
 * One page of a cursor-paginated list: at most `limit` items, and the key to resume after the last of them only when
 * more follow. DynamoDB answers a LastEvaluatedKey for a read that stopped at its Limit even when nothing follows, which
 * would send the client to an empty page; so one item more is read, to tell. A query with a filter may leave its reads
 * short: it reads `readSize` items at a time until the page and one more are found or the partition ends.
 */
export async function queryListPage<T = Record<string, any>>(
  input: Omit<QueryCommandInput, 'TableName' | 'Limit' | 'ExclusiveStartKey'>,
  { limit, startKey, readSize }: { limit: number; startKey?: Record<string, unknown>; readSize?: number },
): Promise<{ items: T[]; lastKey: Record<string, unknown> | undefined }> {
  const items: Record<string, any>[] = [];
  let lastKey = startKey;
  do {
    const page = await db.send(new QueryCommand({ TableName: table(), ...input, ExclusiveStartKey: lastKey, Limit: readSize ?? limit + 1 - items.length }));
    items.push(...(page.Items ?? []));
    lastKey = page.LastEvaluatedKey;
  } while (lastKey && items.length <= limit);
  if (items.length <= limit) return { items: items as T[], lastKey: undefined };
  // The key of the page's last item, as DynamoDB would give it (an index read's key holds the index's attributes too).
  const last = items[limit - 1];
  const keyNames = input.IndexName ? ['pk', 'sk', `${input.IndexName}pk`, `${input.IndexName}sk`] : ['pk', 'sk'];
  return { items: items.slice(0, limit) as T[], lastKey: Object.fromEntries(keyNames.map((name) => [name, last[name]])) };
}
