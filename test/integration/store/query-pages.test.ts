/**
 * Every read that walks a partition whole asks for bounded pages (QUERY_PAGE): DynamoDB Local costs each
 * unbounded page in proportion to what is left of the partition, which made whole reads of large partitions
 * (a business's projection at a million contacts, a broadcast's recipients, a static segment's members)
 * quadratic. The Query commands each read sends are recorded at the client and checked for their Limit.
 */
import { randomUUID } from 'node:crypto';
import { dynamo } from '#shared/store/client.ts';
import { QUERY_PAGE, queryAll, queryCount } from '#shared/store/query.ts';
import { batchWriteAll } from '#shared/store/batch.ts';
import { scanProjection } from '#shared/contacts/filters/scan.ts';
import { rekeyShardOrder } from '#shared/contacts/filters/rekey.ts';
import { tallyRecipients } from '#shared/broadcasts/counts.ts';
import { readCounters } from '#shared/segments/counters/read.ts';
import { listMemberIds } from '#shared/segments/repository.ts';
import { sweepPendingSends } from '#shared/messages/pending-sweep.ts';

const limits: (number | undefined)[] = [];
const name = `query-pages-${randomUUID()}`;
beforeAll(() => {
  dynamo.middlewareStack.add((next, context) => async (args: any) => {
    if (context.commandName === 'QueryCommand') limits.push(args.input.Limit);
    return next(args);
  }, { step: 'initialize', name });
});
afterAll(() => dynamo.middlewareStack.remove(name));

async function queryLimits(read: () => Promise<unknown>): Promise<(number | undefined)[]> {
  limits.length = 0;
  await read();
  return [...limits];
}

it('queryAll and queryCount read a large partition in pages of QUERY_PAGE, and find every item', async () => {
  const pk = `PAGES#${randomUUID()}`;
  const n = 2 * QUERY_PAGE + 10;
  await batchWriteAll(Array.from({ length: n }, (_, i) => ({ PutRequest: { Item: { pk, sk: `I#${String(i).padStart(5, '0')}` } } })));
  let items: unknown[] = [];
  const sent = await queryLimits(async () => { items = await queryAll({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk } }); });
  expect(items).toHaveLength(n);
  expect(sent).toEqual([QUERY_PAGE, QUERY_PAGE, QUERY_PAGE]);
  let count = 0;
  expect(await queryLimits(async () => { count = await queryCount({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk } }); }))
    .toEqual([QUERY_PAGE, QUERY_PAGE, QUERY_PAGE]);
  expect(count).toBe(n);
});

it.each<[string, () => Promise<unknown>]>([
  ['the projection scan', () => scanProjection(randomUUID())],
  ['the shard rekey', () => rekeyShardOrder(randomUUID())],
  ["a broadcast's recipient tally", () => tallyRecipients(randomUUID(), randomUUID())],
  ["a static segment's members", () => listMemberIds(randomUUID(), randomUUID())],
  ['the segment counters', () => readCounters(randomUUID(), ['k'], Date.now())],
  ['the sweep of unconfirmed sends', () => sweepPendingSends()],
])('%s asks for bounded pages', async (_, read) => {
  const sent = await queryLimits(read);
  expect(sent.length).toBeGreaterThan(0);
  for (const limit of sent) {
    expect(limit).toBeDefined();
    expect(limit).toBeLessThanOrEqual(QUERY_PAGE);
  }
});
