/**
 * Reads every page of a query (lib-dynamodb's paginator), for the small, bounded collections that are
 * read whole: a business's agents, stages, subscriptions, a segment's usage.
 */
import { paginateQuery, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { db, table } from './client.ts';

export async function queryAll<T = Record<string, unknown>>(input: Omit<QueryCommandInput, 'TableName'>): Promise<T[]> {
  const items: T[] = [];
  for await (const page of paginateQuery({ client: db }, { TableName: table(), ...input })) {
    for (const item of page.Items ?? []) items.push(item as T);
  }
  return items;
}

/** Every item of partition `pk` whose sort key starts with `skPrefix`. */
export const queryPrefix = <T = Record<string, unknown>>(pk: string, skPrefix: string, consistent = false): Promise<T[]> =>
  queryAll<T>({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': pk, ':prefix': skPrefix },
    ConsistentRead: consistent,
  });
