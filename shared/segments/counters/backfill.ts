/**
 * The initial count of a new counter (a segment created, or its rules changed): the one scan left on the
 * counters' path, run once, in steps that resume from the cursor stored on each range's counter item.
 *
 * A step reads the range's counter item (its `v` and `w`), reads the next contacts of the range from the table
 * (strongly consistent, in id order), and commits their counts together with the new cursor, conditioned on
 * `v`, `w` and its cursor being unchanged. Contact writes meanwhile: one the cursor has passed adds its delta (write.ts);
 * one ahead of it adds nothing and is read by the step that reaches it; one that lands between a step's read and
 * its commit bumps `w`, so the step is redone; a write that read the cursor before a step passed its contact
 * fails its condition (that contact must still be ahead of the cursor) and retries. So every change is counted once. Steps of different calls race on the cursor: one wins, nothing doubles.
 */
import { TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';
import { isConditionFailure } from '#shared/store/conditional.ts';
import { cancellationCodes } from '#shared/store/transact.ts';
import { decodeProjection } from '#shared/contacts/filters/projection.ts';
import { clock } from './clock.ts';
import { DONE, RANGES, readRangePage } from './ranges.ts';
import type { CountedRule } from './registry.ts';
import { BACKFILL_ITEM_DELTAS, RangeDeltas } from './deltas.ts';
import { readCounterItem } from './write.ts';

const PAGE = 1000;
/** Dated deltas one step may write: at most 10 items of its own (deltas.ts), well within a transaction's 4 MB. */
const MAX_DATED = 10 * BACKFILL_ITEM_DELTAS;

/** Runs steps until every given counter is done in every range (true) or the deadline passes (false). */
export async function backfill(bid: string, rules: CountedRule[], deadline: number): Promise<boolean> {
  if (rules.length === 0) return true;
  const done = await Promise.all(RANGES.map((r) => backfillRange(bid, r, rules, deadline)));
  return done.every(Boolean);
}

async function backfillRange(bid: string, range: number, rules: CountedRule[], deadline: number): Promise<boolean> {
  for (;;) {
    if (Date.now() >= deadline) return false;
    const item = await readCounterItem(bid, range);
    if (!item) return false; // not registered (yet): nothing to resume
    const pending = rules.filter((r) => item[`c_${r.key}`] !== DONE);
    if (pending.length === 0) return true;
    // Counters at the same cursor advance together (segments created at once share one pass).
    const cursor = item[`c_${pending[0].key}`] as string | undefined;
    const group = pending.filter((r) => item[`c_${r.key}`] === cursor);
    await step(bid, range, item, group, cursor);
  }
}

async function step(bid: string, range: number, item: Record<string, any>, group: CountedRule[], cursor: string | undefined): Promise<void> {
  const page = await readRangePage(bid, range, cursor, PAGE);
  const t0 = Math.floor(clock.now() / 1000);
  const deltas = new RangeDeltas();
  let last = cursor;
  let complete = page.complete;
  for (const c of page.contacts) {
    const p = c.proj === undefined ? null : decodeProjection(c.proj, c.id);
    if (p) for (const rule of group) deltas.add(rule, p, t0, 1);
    last = c.id;
    if (deltas.datedCount() >= MAX_DATED) { complete = false; break; }
  }
  // A page that ends the range moves the cursor to DONE; an empty range is done at once.
  const next = complete ? DONE : last;
  if (next === undefined) return;
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':v': item.v, ':next': next };
  const adds = deltas.baseAdds(names, values);
  const sets = group.map((r, i) => {
    names[`#c${i}`] = `c_${r.key}`;
    return `#c${i} = :next`;
  });
  if (item.w !== undefined) values[':w'] = item.w;
  if (cursor !== undefined) values[':cur'] = cursor;
  const update = {
    TableName: table(),
    Key: keys.segmentCounter(bid, range),
    UpdateExpression: `SET ${sets.join(', ')}${adds.length ? ` ADD ${adds.join(', ')}` : ''}`,
    ConditionExpression: [
      'v = :v',
      item.w === undefined ? 'attribute_not_exists(w)' : 'w = :w',
      cursor === undefined ? 'attribute_not_exists(#c0)' : '#c0 = :cur',
    ].join(' AND '),
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
  const dated = deltas.backfillItems(bid, range);
  try {
    if (dated.length === 0) await db.send(new UpdateCommand(update));
    else await db.send(new TransactWriteCommand({ TransactItems: [{ Update: update }, ...dated] }));
  } catch (err) {
    // A contact write or another backfill got there first: the caller re-reads and redoes this step.
    if (isConditionFailure(err) || cancellationCodes(err)) return;
    throw err;
  }
}
