/**
 * Counts of dynamic segments from their maintained counters: a read of the 16 range partitions, then, for
 * counters still being backfilled, as many backfill steps as the deadline allows. A counter not done by then
 * answers stale (the last stored count), which is the truth: its count is not known yet.
 * Segments made before counters existed get a counter key here, on first read, and are backfilled like new ones.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';
import { isConditionFailure } from '#shared/store/conditional.ts';
import { getSegment, type SegmentRecord } from '../repository.ts';
import { backfill } from './backfill.ts';
import { clock } from './clock.ts';
import { readCounters } from './read.ts';
import { countedRules, equivalentKey, newCounterKey, registerCounters } from './registry.ts';

export interface MaintainedCount {
  count: number;
  stale: boolean;
  /** Count of the v3 equivalent of legacy rules (when it has one and it is live). */
  equivalent?: number;
}

/** Gives dynamic segments made before counters existed a counter key (once, whoever asks first). */
async function withCounterKeys(bid: string, records: SegmentRecord[]): Promise<SegmentRecord[]> {
  let registered = false;
  const out = await Promise.all(records.map(async (r) => {
    if (r.segmentType !== 'dynamic' || r.counterKey) return r;
    const key = newCounterKey();
    try {
      await db.send(new UpdateCommand({
        TableName: table(),
        Key: keys.segment(bid, r.id),
        UpdateExpression: 'SET counterKey = :k',
        ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(counterKey) OR counterKey = :null)',
        ExpressionAttributeValues: { ':k': key, ':null': null },
      }));
      registered = true;
      return { ...r, counterKey: key };
    } catch (err) {
      if (!isConditionFailure(err)) throw err;
      return (await getSegment(bid, r.id)) ?? r;
    }
  }));
  if (registered) await registerCounters(bid);
  return out;
}

/** Maintained counts of the dynamic segments among `records` (with valid rules), by segment id. */
export async function maintainedCounts(bid: string, records: SegmentRecord[], deadline: number | undefined): Promise<Map<string, MaintainedCount>> {
  const keyed = await withCounterKeys(bid, records);
  const rules = countedRules(keyed);
  const counterKeys = rules.map((r) => r.key);
  let state = await readCounters(bid, counterKeys, clock.now());
  if (state.pending.size > 0) {
    await backfill(bid, rules.filter((r) => state.pending.has(r.key)), deadline ?? Number.POSITIVE_INFINITY);
    state = await readCounters(bid, counterKeys, clock.now());
  }
  const out = new Map<string, MaintainedCount>();
  for (const r of keyed) {
    if (!r.counterKey || !counterKeys.includes(r.counterKey)) continue;
    const count = state.live.get(r.counterKey);
    if (count === undefined) {
      out.set(r.id, { count: r.contactCount, stale: true });
      continue;
    }
    out.set(r.id, { count, stale: false, equivalent: state.live.get(equivalentKey(r.counterKey)) });
  }
  return out;
}
