/**
 * The counters' side of a contact write: the items that go into the contact's own transaction, so a count moves
 * exactly when (and only if) the contact write lands, under the same version condition.
 *
 * Per range touched: one update of its counter item, conditioned on the `v` this write read (no counter was
 * added or dropped since), bumping `w` (a backfill step in flight over this
 * range notices and redoes its page) and requiring every contact a backfill has not passed to be still ahead
 * of its cursor, with base deltas for the counters whose backfill has passed the contact;
 * plus one update per minute item holding a future step of a time-relative rule. A change that moves no count
 * and meets no backfill is a condition check only; a change that leaves the projection as it was adds nothing.
 * The counter items and rules come from the container's copy (copy.ts), not from reads: the conditions above are
 * what proves the copy current, and a write whose copy was stale is cancelled on one of them.
 */
import { ConditionCheck } from './condition.ts';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { counterCopy } from './copy.ts';
import type { TransactItem } from '#shared/events/outbox.ts';
import type { Contact } from '#shared/contacts/model.ts';
import { db, table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';
import { decodeProjection, encodeProjection } from '#shared/contacts/filters/projection.ts';
import { clock } from './clock.ts';
import { DONE, passed, rangeOf } from './ranges.ts';
import { RangeDeltas } from './deltas.ts';

const guard = (bid: string, item: TransactItem): TransactItem => {
  counterItemBusiness.set(item, bid);
  return item;
};

export interface ContactChange { before: Contact | null; after: Contact | null }

const projOf = (c: Contact | null) => (c && !c.deleted_at ? encodeProjection(c) : null);

export async function readCounterItem(bid: string, range: number): Promise<Record<string, any> | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: table(), Key: keys.segmentCounter(bid, range), ConsistentRead: true }));
  return Item;
}

/** The business of each counter item built here, so a cancellation on one of them drops that business's copy. */
export const counterItemBusiness = new WeakMap<TransactItem, string>();

/** The counter items to add to the transaction that writes these contact changes. */
export async function segmentCountItems(bid: string, changes: ContactChange[]): Promise<TransactItem[]> {
  const moving = changes
    .map((c) => ({ id: (c.after ?? c.before)!.id, before: projOf(c.before), after: projOf(c.after) }))
    .filter((c) => c.before !== c.after);
  if (moving.length === 0) return [];
  const byRange = new Map<number, typeof moving>();
  for (const c of moving) byRange.set(rangeOf(c.id), [...(byRange.get(rangeOf(c.id)) ?? []), c]);
  const ranges = [...byRange.keys()];
  const copy = await counterCopy(bid);
  const items = ranges.map((r) => copy.items[r]);
  const rules = copy.rules;
  const t0 = Math.floor(clock.now() / 1000);
  const out: TransactItem[] = [];
  ranges.forEach((r, i) => {
    const item = items[i];
    const key = keys.segmentCounter(bid, r);
    if (!item) {
      // No counter registered yet: the write must not land after one is.
      out.push(guard(bid, ConditionCheck(key, 'attribute_not_exists(pk)')));
      return;
    }
    const deltas = new RangeDeltas();
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = { ':v': item.v ?? 0 };
    // Contacts a backfill has not passed must still be ahead of its cursor when this lands (it only moves forward).
    const ahead: string[] = [];
    for (const rule of rules) {
      const cursor = item[`c_${rule.key}`] as string | undefined;
      const notPassed = byRange.get(r)!.filter((c) => !passed(cursor, c.id)).map((c) => c.id).sort();
      if (notPassed.length > 0) {
        const i = ahead.length;
        names[`#k${i}`] = `c_${rule.key}`;
        values[`:k${i}`] = notPassed[0];
        ahead.push(`(attribute_not_exists(#k${i}) OR #k${i} < :k${i})`);
      }
      for (const c of byRange.get(r)!) {
        if (!passed(cursor, c.id)) continue;
        if (c.before !== null) deltas.add(rule, decodeProjection(c.before, c.id), t0, -1);
        if (c.after !== null) deltas.add(rule, decodeProjection(c.after, c.id), t0, 1);
      }
    }
    const backfilling = rules.some((rule) => item[`c_${rule.key}`] !== DONE);
    const adds = deltas.baseAdds(names, values);
    const condition = ['v = :v', ...ahead].join(' AND ');
    const withNames = Object.keys(names).length ? { ExpressionAttributeNames: names } : {};
    if (adds.length === 0 && !backfilling) {
      out.push(guard(bid, { ConditionCheck: { TableName: table(), Key: key, ConditionExpression: condition, ...withNames, ExpressionAttributeValues: values } }));
    } else {
      values[':one'] = 1;
      out.push(guard(bid, { Update: {
        TableName: table(),
        Key: key,
        UpdateExpression: `ADD ${['w :one', ...adds].join(', ')}`,
        ConditionExpression: condition,
        ...withNames,
        ExpressionAttributeValues: values,
      } }));
    }
    out.push(...deltas.datedUpdates(bid, r));
  });
  return out;
}
