/**
 * Folding dated deltas whose instant has passed into the base counts, so a count's read stays small as days
 * pass. Each fold is one transaction per range (chunked at a transaction's 100 items): the sums go into the
 * counter item, conditioned on the `v` it was read at (so no counter registered or dropped since: the sums are
 * of exactly the counters the item keeps; deltas of dropped counters are discarded), and each folded item goes,
 * conditioned on being as it was read.
 *
 * - A minute item (contact writes add to it) is folded whole once FOLD_AFTER_MINUTES have passed (no writer,
 *   whatever its clock skew, still adds to it), and deleted only at the `u` it was read at.
 * - A backfill item (written once, by a backfill step) is folded as soon as it is read: its deltas of past minutes
 *   go into the base, those of the current minute into that minute's item (a few, and that item is small), and the
 *   rest into the same item re-keyed at its new earliest minute, which is then in the future: a count reads a
 *   backfill item (tens of KB) once, not on every read until its next step.
 */
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { TransactItem } from '#shared/events/outbox.ts';
import { db, table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';
import { ConditionCheck } from './condition.ts';
import { RangeDeltas, datedAttributes } from './deltas.ts';

const FOLD_AFTER_MINUTES = 5;
/** Transaction items one fold may use besides the counter item's update and the current minute's item. */
const FOLD_ITEMS = 97;

const isBackfillItem = (sk: string) => sk.includes('#B');

interface Folded {
  items: TransactItem[];
  /** Base deltas per counter key. */
  sums: Map<string, number>;
  /** Deltas of the current minute, by attribute (`{key}_{second}`), for its minute item. */
  current: Map<string, number>;
}

/** The deltas of an item as [absolute second, key, delta], for the counters the range keeps. */
function deltasOf(item: Record<string, any>, kept: Set<string>): [number, string, number][] {
  const base = keys.segmentCounterMinute(item.sk) * 60;
  const out: [number, string, number][] = [];
  for (const [name, d] of Object.entries(item)) {
    const sep = name.lastIndexOf('_');
    if (sep < 0) continue;
    const key = name.slice(0, sep);
    if (kept.has(key)) out.push([base + Number(name.slice(sep + 1)), key, Number(d)]);
  }
  return out;
}

function foldItem(bid: string, range: number, item: Record<string, any>, kept: Set<string>, nowMinute: number): Folded | null {
  const minute = keys.segmentCounterMinute(item.sk);
  const sums = new Map<string, number>();
  const current = new Map<string, number>();
  const add = (into: Map<string, number>, name: string, d: number) => into.set(name, (into.get(name) ?? 0) + d);
  const itemKey = { pk: item.pk, sk: item.sk };
  if (!isBackfillItem(item.sk)) {
    if (minute >= nowMinute - FOLD_AFTER_MINUTES) return null;
    for (const [, key, d] of deltasOf(item, kept)) add(sums, key, d);
    return { sums, current, items: [{ Delete: { TableName: table(), Key: itemKey, ConditionExpression: 'u = :u', ExpressionAttributeValues: { ':u': item.u } } }] };
  }
  if (minute > nowMinute) return null;
  const rest: [number, string, number][] = [];
  for (const [at, key, d] of deltasOf(item, kept)) {
    if (at < nowMinute * 60) add(sums, key, d);
    else if (at < (nowMinute + 1) * 60) add(current, `${key}_${at % 60}`, d);
    else rest.push([Math.floor(at / 60), `${key}_${at % 60}`, d]);
  }
  const items: TransactItem[] = [{ Delete: { TableName: table(), Key: itemKey, ConditionExpression: 'attribute_exists(pk)' } }];
  if (rest.length > 0) {
    rest.sort((a, b) => a[0] - b[0]);
    const token = item.sk.slice(item.sk.indexOf('#B') + 2);
    items.push({ Put: {
      TableName: table(),
      Item: { ...keys.segmentCounterBackfill(bid, range, rest[0][0], token), ...datedAttributes(rest[0][0], rest) },
      ConditionExpression: 'attribute_not_exists(pk)',
    } });
  }
  return { sums, current, items };
}

/** Folds what has passed of one range's dated items (as read beside `counter`). Throws when it lost a race. */
export async function foldRange(bid: string, range: number, counter: Record<string, any> | undefined, dated: Record<string, any>[], nowSec: number): Promise<void> {
  if (!counter || dated.length === 0) return;
  const kept = new Set(Object.keys(counter).filter((n) => n.startsWith('c_')).map((n) => n.slice(2)));
  const nowMinute = Math.floor(nowSec / 60);
  const folds = dated.map((item) => foldItem(bid, range, item, kept, nowMinute)).filter((f): f is Folded => f !== null);
  for (let i = 0; i < folds.length;) {
    const chunk: Folded[] = [];
    let size = 0;
    while (i < folds.length && size + folds[i].items.length <= FOLD_ITEMS) {
      size += folds[i].items.length;
      chunk.push(folds[i++]);
    }
    const sums = new Map<string, number>();
    // The current minute's deltas of the whole chunk, as one update of its minute item.
    const current = new RangeDeltas();
    const thisMinute = new Map<string, number>();
    current.dated.set(nowMinute, thisMinute);
    for (const f of chunk) {
      for (const [key, d] of f.sums) sums.set(key, (sums.get(key) ?? 0) + d);
      for (const [name, d] of f.current) thisMinute.set(name, (thisMinute.get(name) ?? 0) + d);
    }
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = { ':v': counter.v };
    const adds = [...sums].filter(([, d]) => d !== 0).map(([key, d], j) => {
      names[`#n${j}`] = `n_${key}`;
      values[`:n${j}`] = d;
      return `#n${j} :n${j}`;
    });
    const key = keys.segmentCounter(bid, range);
    await db.send(new TransactWriteCommand({ TransactItems: [
      adds.length
        ? { Update: { TableName: table(), Key: key, UpdateExpression: `ADD ${adds.join(', ')}`, ConditionExpression: 'v = :v', ExpressionAttributeNames: names, ExpressionAttributeValues: values } }
        : ConditionCheck(key, 'v = :v', values),
      ...chunk.flatMap((f) => f.items),
      ...current.datedUpdates(bid, range),
    ] }));
  }
}
