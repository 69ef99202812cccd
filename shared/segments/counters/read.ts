/**
 * Reading maintained counts: one strongly consistent query per range returns its counter item and its minute
 * items up to now, so any number of segments costs 16 small queries whatever the contacts. A count is the base
 * plus every dated delta whose instant has come; it is exact for a counter whose backfill is done in every range.
 * Minute items well past are folded into the base (a transaction that deletes each only if no write touched it
 * since it was read), so the read stays small as days pass.
 */
import { QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';
import { logger } from '#shared/log/logger.ts';
import { DONE, RANGES } from './ranges.ts';

export interface CounterState {
  /** Counts of counters done in every range. */
  live: Map<string, number>;
  /** Counters some range of which is still being backfilled. */
  pending: Set<string>;
}

/** Minute items this old (minutes) are folded: no writer, whatever its clock skew, still writes steps into them. */
const FOLD_AFTER_MINUTES = 5;
const FOLD_BATCH = 90;

async function readRange(bid: string, range: number, nowSec: number) {
  const items: Record<string, any>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db.send(new QueryCommand({
      TableName: table(),
      KeyConditionExpression: 'pk = :pk AND sk <= :to',
      ExpressionAttributeValues: { ':pk': keys.segmentCounterPk(bid, range), ':to': keys.segmentCounterDated(bid, range, Math.floor(nowSec / 60)).sk },
      ConsistentRead: true,
      ExclusiveStartKey: start,
    }));
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return { counter: items.find((i) => i.sk === 'K'), dated: items.filter((i) => i.sk !== 'K') };
}

const minuteOf = (sk: string) => Number(sk.slice(2));

/** Sum of a minute item's deltas of `key` whose instant is at or before nowSec. */
function datedSum(item: Record<string, any>, key: string, nowSec: number): number {
  const base = minuteOf(item.sk) * 60;
  let sum = 0;
  for (const [name, d] of Object.entries(item)) {
    const sep = name.lastIndexOf('_');
    if (sep < 0 || name.slice(0, sep) !== key) continue;
    if (base + Number(name.slice(sep + 1)) <= nowSec) sum += Number(d);
  }
  return sum;
}

export async function readCounters(bid: string, counterKeys: string[], nowMs: number): Promise<CounterState> {
  const nowSec = Math.floor(nowMs / 1000);
  const state: CounterState = { live: new Map(), pending: new Set() };
  if (counterKeys.length === 0) return state;
  const ranges = await Promise.all(RANGES.map((r) => readRange(bid, r, nowSec)));
  for (const key of counterKeys) {
    let total = 0;
    let done = true;
    for (const { counter, dated } of ranges) {
      if (!counter || counter[`c_${key}`] !== DONE) done = false;
      total += Number(counter?.[`n_${key}`] ?? 0);
      for (const item of dated) total += datedSum(item, key, nowSec);
    }
    if (done) state.live.set(key, total);
    else state.pending.add(key);
  }
  const foldBefore = Math.floor(nowSec / 60) - FOLD_AFTER_MINUTES;
  await Promise.all(ranges.map(({ dated }, r) => fold(bid, r, dated.filter((i) => minuteOf(i.sk) < foldBefore), new Set(counterKeys)).catch((err) => {
    // Lost a race with a writer or another fold: nothing changed, the next read folds again.
    logger.debug('segment counter fold skipped', { error: err as Error });
  })));
  return state;
}

/** Moves past minute items into the base: all-or-nothing, each deleted only at the `u` it was read at. */
async function fold(bid: string, range: number, items: Record<string, any>[], known: Set<string>): Promise<void> {
  for (let i = 0; i < items.length; i += FOLD_BATCH) {
    const batch = items.slice(i, i + FOLD_BATCH);
    const sums = new Map<string, number>();
    for (const item of batch) {
      for (const [name, d] of Object.entries(item)) {
        const sep = name.lastIndexOf('_');
        if (sep < 0 || name === 'pk' || name === 'sk') continue;
        const key = name.slice(0, sep);
        if (known.has(key)) sums.set(key, (sums.get(key) ?? 0) + Number(d));
      }
    }
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = {};
    const adds = [...sums].filter(([, d]) => d !== 0).map(([key, d], j) => {
      names[`#n${j}`] = `n_${key}`;
      values[`:n${j}`] = d;
      return `#n${j} :n${j}`;
    });
    await db.send(new TransactWriteCommand({ TransactItems: [
      ...(adds.length ? [{ Update: { TableName: table(), Key: keys.segmentCounter(bid, range), UpdateExpression: `ADD ${adds.join(', ')}`, ConditionExpression: 'attribute_exists(pk)', ExpressionAttributeNames: names, ExpressionAttributeValues: values } }] : []),
      ...batch.map((item) => ({ Delete: { TableName: table(), Key: { pk: item.pk, sk: item.sk }, ConditionExpression: 'u = :u', ExpressionAttributeValues: { ':u': item.u } } })),
    ] }));
  }
}
