/**
 * Reading maintained counts: one strongly consistent query per range returns its counter item and its dated
 * items up to now, so any number of segments costs 16 small queries whatever the contacts. A count is the base
 * plus every dated delta whose instant has come; it is exact for a counter whose backfill is done in every range.
 * Dated items that have passed are folded into the base (fold.ts), so the read stays small as days pass.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { QUERY_PAGE } from '#shared/store/query.ts';
import { keys } from '#shared/store/keys.ts';
import { logger } from '#shared/log/logger.ts';
import { DONE, RANGES } from './ranges.ts';
import { foldRange } from './fold.ts';

export interface CounterState {
  /** Counts of counters done in every range. */
  live: Map<string, number>;
  /** Counters some range of which is still being backfilled. */
  pending: Set<string>;
}

async function readRange(bid: string, range: number, nowSec: number) {
  const items: Record<string, any>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db.send(new QueryCommand({
      TableName: table(),
      // Every item of a minute up to now's (a backfill item's key extends its minute's).
      KeyConditionExpression: 'pk = :pk AND sk < :to',
      ExpressionAttributeValues: { ':pk': keys.segmentCounterPk(bid, range), ':to': keys.segmentCounterDated(bid, range, Math.floor(nowSec / 60) + 1).sk },
      ConsistentRead: true,
      ExclusiveStartKey: start,
      Limit: QUERY_PAGE,
    }));
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return { counter: items.find((i) => i.sk === 'K'), dated: items.filter((i) => i.sk !== 'K') };
}

/** Sum of a minute item's deltas of `key` whose instant is at or before nowSec. */
function datedSum(item: Record<string, any>, key: string, nowSec: number): number {
  const base = keys.segmentCounterMinute(item.sk) * 60;
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
  await Promise.all(ranges.map(({ counter, dated }, r) => foldRange(bid, r, counter, dated, nowSec).catch((err) => {
    // Lost a race with a writer, a registration or another fold: nothing changed, the next read folds again.
    logger.debug('segment counter fold skipped', { error: err as Error });
  })));
  return state;
}
