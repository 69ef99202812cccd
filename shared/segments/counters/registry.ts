/**
 * Which counters a business maintains: one per dynamic segment with valid rules (and, for legacy rules with a
 * v3 equivalent, one more for the equivalent, so `filters` is shown only when both counted the same), keyed by
 * the segment's `counterKey`. Registering or dropping counters bumps `v` on every range's counter item: a
 * contact write conditioned on the `v` it read cannot land with a stale list of counters.
 */
import { randomBytes } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';
import { filtersToCondition } from '#shared/contacts/filters/filters.ts';
import { equivalentFilters, parseRules, rulesCondition } from '../rules.ts';
import { listSegments, type SegmentRecord } from '../repository.ts';
import { RANGES } from './ranges.ts';
import { timed, type Timed } from './timed.ts';

export interface CountedRule {
  /** Attribute-safe key: `n_{key}` base count, `c_{key}` backfill cursor, `{key}_{second}` dated deltas. */
  key: string;
  segmentId: string;
  rule: Timed;
}

/** At most this many dynamic segments per business: each adds bytes to every counter item a contact write updates. */
export const MAX_DYNAMIC_SEGMENTS = 50;

export const newCounterKey = () => randomBytes(5).toString('hex');
/** The counter of a legacy segment's v3 equivalent. */
export const equivalentKey = (key: string) => `${key}e`;

export function countedRules(records: SegmentRecord[]): CountedRule[] {
  const out: CountedRule[] = [];
  for (const r of records) {
    if (r.segmentType !== 'dynamic' || !r.counterKey) continue;
    const parsed = parseRules(r.rules);
    if (!parsed.ok) continue;
    out.push({ key: r.counterKey, segmentId: r.id, rule: timed((now) => rulesCondition(parsed, now)) });
    const eq = parsed.format === 'legacy' ? equivalentFilters(parsed) : null;
    if (eq) out.push({ key: equivalentKey(r.counterKey), segmentId: r.id, rule: timed((now) => filtersToCondition(eq, now)) });
  }
  return out;
}

/** The counters of a business as a contact write must see them (strongly consistent). */
export const listCountedRules = async (bid: string) => countedRules(await listSegments(bid, true));

/** Told after this container registered counters (the copy of contact writes, copy.ts, is then read again). */
const registered: ((bid: string) => void)[] = [];
export const onCountersRegistered = (listener: (bid: string) => void) => { registered.push(listener); };

/** Bumps `v` on every range (creating the items) and drops the attributes of counters no longer kept. */
export async function registerCounters(bid: string, drop: string[] = []): Promise<void> {
  try {
    await bumpRanges(bid, drop);
  } finally {
    for (const listener of registered) listener(bid);
  }
}

async function bumpRanges(bid: string, drop: string[]): Promise<void> {
  const names: Record<string, string> = {};
  const removes = drop.flatMap((k) => [k, equivalentKey(k)]).flatMap((k, i) => {
    names[`#n${i}`] = `n_${k}`;
    names[`#c${i}`] = `c_${k}`;
    return [`#n${i}`, `#c${i}`];
  });
  await Promise.all(RANGES.map((r) => db.send(new UpdateCommand({
    TableName: table(),
    Key: keys.segmentCounter(bid, r),
    UpdateExpression: `ADD v :one${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
    ExpressionAttributeValues: { ':one': 1 },
    ...(removes.length ? { ExpressionAttributeNames: names } : {}),
  }))));
}
