/**
 * Contacts and the funnel:
 *
 * - 100 contacts created by one `POST /contacts/v1/bulk` vs the same 100 by 100 sequential `POST /contacts/v1`,
 *   both through their Lambda handlers on the same table. Target: the bulk at least 5x faster (ratio ≤ 0.2): one
 *   request, one BatchGetItem for the phone look-ups and a few parallel TransactWriteItems, instead of a request,
 *   a look-up and a transaction per contact.
 * - listing a 50-stage funnel whose stages hold 100k contacts (10k with --quick) vs listing a 10-contact funnel.
 *   Target ≤ 1.5x (about 1): `contact_count` is a maintained counter, never a count of contacts.
 *
 * Seeded contacts are written straight into the table in the contacts area's item shape (BatchWrite), with
 * their stages' counters set to match.
 */
import { randomUUID } from 'node:crypto';
import { BatchWriteCommand, UpdateCommand, type BatchWriteCommandOutput } from '@aws-sdk/lib-dynamodb';
import pLimit from 'p-limit';
import type { BenchFigure, BenchOptions } from './types.ts';
import { measurePaired } from './types.ts';

export async function run({ quick }: BenchOptions): Promise<BenchFigure[]> {
  const { db, table } = await import('#shared/store/client.ts');
  const { keys } = await import('#shared/store/keys.ts');
  const { createBusiness } = await import('#shared/business/repository.ts');
  const { createApiKey } = await import('#shared/auth/api-keys.ts');
  const { invoke } = await import('../support/api.ts');
  const { contactPut, newContact } = await import('#shared/contacts/repository.ts');
  const { createStage, listStages } = await import('#shared/funnel/service.ts');

  // 1. Bulk create vs sequential single creates, each through its Lambda handler with API Gateway events (auth,
  //    rate limit, validation included: what a client pays). A fresh business and key per run: every number is
  //    new and the per-key limits (100 requests, 10 bulk per minute) are not what is measured.
  let seq = 0;
  const phones = () => Array.from({ length: 100 }, () => `+1212${String(++seq).padStart(7, '0')}`);
  const tenant = async () => {
    const bid = (await createBusiness('contacts bench')).businessId;
    return (await createApiKey(bid, ['contacts:write'])).apiKey;
  };
  // What the bulk requests cost in DynamoDB: transactions sent and cancelled (a lost race redoes work).
  const { dynamo } = await import('#shared/store/client.ts');
  const tally = { on: false, runs: 0, requests: 0, transactions: 0, cancelled: 0 };
  dynamo.middlewareStack.add((next, context) => async (args) => {
    if (!tally.on) return next(args);
    tally.requests++;
    if (context.commandName === 'TransactWriteItemsCommand') tally.transactions++;
    try {
      return await next(args);
    } catch (err) {
      if ((err as Error).name === 'TransactionCanceledException') tally.cancelled++;
      throw err;
    }
  }, { step: 'initialize', name: 'bulkTally' });
  const [bulk, single] = await measurePaired(async () => {
    const apiKey = await tenant();
    tally.on = true;
    tally.runs++;
    const res = await invoke('POST /contacts/v1/bulk', { apiKey, body: { operation: 'create', contacts: phones().map((phone_number, i) => ({ phone_number, name: `C${i}`, tags: ['bench'] })) } });
    tally.on = false;
    if (res.status !== 200) throw new Error(`bulk answered ${res.status}`);
  }, async () => {
    const apiKey = await tenant();
    for (const [i, phone_number] of phones().entries()) {
      const res = await invoke('POST /contacts/v1', { apiKey, body: { phone_number, name: `C${i}`, tags: ['bench'] } });
      if (res.status !== 201) throw new Error(`create answered ${res.status}`);
    }
  }, quick ? 5 : 7, 2);
  // 2. Stage list: 50 stages over many contacts vs 10 contacts.
  const seedFunnel = async (contacts: number) => {
    const bid = (await createBusiness('funnel bench')).businessId;
    const stages = [];
    for (let i = 0; i < 50; i++) stages.push(await createStage(bid, { name: `Stage ${i}` }));
    const perStage = new Map<string, number>();
    const limit = pLimit(8);
    const batches: Promise<unknown>[] = [];
    for (let start = 0; start < contacts; start += 25) {
      const items: Record<string, unknown>[] = [];
      for (let i = start; i < Math.min(contacts, start + 25); i++) {
        const stage = stages[i % stages.length].id;
        perStage.set(stage, (perStage.get(stage) ?? 0) + 1);
        const c = { ...newContact({ phone_number: `+1313${String(i).padStart(7, '0')}`, name: `Seed ${i}`, funnel_stage_id: stage, origin: 'import' }), id: randomUUID() };
        items.push({ PutRequest: { Item: (contactPut(bid, c, null) as any).Put.Item } });
      }
      batches.push(limit(async () => {
        let pending: any = { [table()]: items };
        while (pending && Object.keys(pending).length > 0) {
          const out: BatchWriteCommandOutput = await db.send(new BatchWriteCommand({ RequestItems: pending }));
          pending = out.UnprocessedItems;
        }
      }));
    }
    await Promise.all(batches);
    await Promise.all([...perStage].map(([id, n]) => db.send(new UpdateCommand({
      TableName: table(), Key: keys.stage(bid, id), UpdateExpression: 'SET contact_count = :n', ExpressionAttributeValues: { ':n': n },
    }))));
    return bid;
  };
  const many = quick ? 10_000 : 100_000;
  const bigBid = await seedFunnel(many);
  const smallBid = await seedFunnel(10);
  const [big, small] = await measurePaired(async () => {
    const stages = await listStages(bigBid);
    if (stages.length !== 50 || stages.reduce((n, s) => n + s.contact_count, 0) !== many) throw new Error('unexpected funnel');
  }, () => listStages(smallBid), 31, 5);

  return [
    {
      name: 'contacts: bulk create of 100',
      value: bulk.median,
      unit: 'ms',
      spread: bulk.spread,
      baseline: single.median,
      baselineName: '100 sequential single creates',
      target: { maxRatio: 0.2 },
      note: `bulk ${bulk.median.toFixed(0)} ms vs sequential ${single.median.toFixed(0)} ms: ${(single.median / bulk.median).toFixed(1)}x faster; `
        + `per bulk call ${(tally.requests / tally.runs).toFixed(1)} DynamoDB requests, ${(tally.transactions / tally.runs).toFixed(1)} transactions, ${(tally.cancelled / tally.runs).toFixed(1)} cancelled`,
    },
    {
      name: `funnel: list 50 stages over ${many.toLocaleString('en')} contacts`,
      value: big.median,
      unit: 'ms',
      spread: big.spread,
      baseline: small.median,
      baselineName: '50 stages over 10 contacts',
      target: { maxRatio: 1.5 },
    },
  ];
}
