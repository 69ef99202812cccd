/**
 * The store's batched reads and writes against DynamoDB Local, including the unprocessed items and keys
 * DynamoDB may hand back under load (simulated by a middleware that answers in its place).
 */
import { randomUUID } from 'node:crypto';
import { batchGetAll, batchWriteAll } from '#shared/store/batch.ts';
import { dynamo, table } from '#shared/store/client.ts';

/** Makes the next `times` calls of `command` come back with everything unprocessed, without reaching the table. */
function refuse(command: 'BatchWriteItemCommand' | 'BatchGetItemCommand', times: number) {
  let left = times;
  const name = `refuse-${randomUUID()}`;
  dynamo.middlewareStack.add((next, context) => async (args: any) => {
    if (context.commandName !== command || left <= 0) return next(args);
    left--;
    const output = command === 'BatchWriteItemCommand'
      ? { UnprocessedItems: args.input.RequestItems, $metadata: {} }
      : { Responses: { [table()]: [] }, UnprocessedKeys: args.input.RequestItems, $metadata: {} };
    return { output, response: {} } as any;
  }, { step: 'initialize', name });
  return () => dynamo.middlewareStack.remove(name);
}

const items = (pk: string, n: number) => Array.from({ length: n }, (_, i) => ({ pk, sk: `I#${String(i).padStart(3, '0')}`, n: i, extra: 'x' }));

it('writes and reads back more than one request of items, with a projection', async () => {
  const pk = `BATCH#${randomUUID()}`;
  await batchWriteAll(items(pk, 60).map((Item) => ({ PutRequest: { Item } })), { concurrency: 3 });
  const got = await batchGetAll([...items(pk, 60), { pk, sk: 'missing' }].map(({ pk: p, sk }) => ({ pk: p, sk })), { projection: 'sk, #n', names: { '#n': 'n' } });
  expect(got).toHaveLength(60);
  expect(got.every((g) => Object.keys(g).sort().join() === 'n,sk')).toBe(true);
});

it('retries what DynamoDB leaves unprocessed until it is done', async () => {
  const pk = `BATCH#${randomUUID()}`;
  let restore = refuse('BatchWriteItemCommand', 2);
  await batchWriteAll(items(pk, 30).map((Item) => ({ PutRequest: { Item } })));
  restore();
  restore = refuse('BatchGetItemCommand', 2);
  const got = await batchGetAll(items(pk, 30).map(({ sk }) => ({ pk, sk })));
  restore();
  expect(got).toHaveLength(30);
});

it('fails, rather than losing items silently, when they stay unprocessed', async () => {
  const pk = `BATCH#${randomUUID()}`;
  const restore = refuse('BatchWriteItemCommand', 100);
  try {
    await expect(batchWriteAll(items(pk, 5).map((Item) => ({ PutRequest: { Item } })))).rejects.toThrow(/unprocessed/);
  } finally {
    restore();
  }
}, 20_000);
