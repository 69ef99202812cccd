/**
 * Count changes of one range, gathered before they are written: base deltas per counter key and dated deltas
 * per minute (`{key}_{second of minute}`), and the writes that store them. Zero deltas are dropped, so a
 * change that moves no count writes nothing but its guard.
 *
 * A contact write adds its few steps to the shared minute items (`datedUpdates`). A backfill step, whose
 * thousand contacts have steps spread over months (one minute item each), puts them instead into items of its
 * own (`backfillItems`): its steps in time order, up to BACKFILL_ITEM_DELTAS per item, each keyed by its earliest step.
 * A dated delta is named by its offset from the item's minute (`{key}_{seconds}`), in either kind of item.
 */
import { randomBytes } from 'node:crypto';
import type { TransactItem } from '#shared/events/outbox.ts';
import { table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';
import type { CountedRule } from './registry.ts';
import { contribution } from './timed.ts';
import type { ProjectedContact } from '#shared/contacts/filters/projection.ts';

export class RangeDeltas {
  readonly base = new Map<string, number>();
  /** minute → attribute → delta */
  readonly dated = new Map<number, Map<string, number>>();

  add(rule: CountedRule, p: ProjectedContact | null, t0: number, sign: 1 | -1): void {
    const c = contribution(rule.rule, p, t0);
    if (c.now) this.base.set(rule.key, (this.base.get(rule.key) ?? 0) + sign * c.now);
    for (const [at, d] of c.steps) {
      const minute = Math.floor(at / 60);
      const attrs = this.dated.get(minute) ?? new Map<string, number>();
      const name = `${rule.key}_${at % 60}`;
      attrs.set(name, (attrs.get(name) ?? 0) + sign * d);
      this.dated.set(minute, attrs);
    }
  }

  /** Dated deltas gathered (an upper bound of what `backfillItems` writes). */
  datedCount(): number {
    let n = 0;
    for (const attrs of this.dated.values()) n += attrs.size;
    return n;
  }

  /** `ADD` clauses of the base deltas (attribute `n_{key}`), named from `prefix`. */
  baseAdds(names: Record<string, string>, values: Record<string, unknown>): string[] {
    const out: string[] = [];
    let i = 0;
    for (const [key, d] of this.base) {
      if (d === 0) continue;
      names[`#b${i}`] = `n_${key}`;
      values[`:b${i}`] = d;
      out.push(`#b${i} :b${i}`);
      i++;
    }
    return out;
  }

  /** One update per minute item with a non-zero delta; each bumps `u`, which a fold checks before deleting it. */
  datedUpdates(bid: string, range: number): TransactItem[] {
    const out: TransactItem[] = [];
    for (const [minute, attrs] of this.dated) {
      const names: Record<string, string> = {};
      const values: Record<string, unknown> = { ':one': 1 };
      const adds: string[] = [];
      let i = 0;
      for (const [name, d] of attrs) {
        if (d === 0) continue;
        names[`#a${i}`] = name;
        values[`:a${i}`] = d;
        adds.push(`#a${i} :a${i}`);
        i++;
      }
      if (adds.length === 0) continue;
      out.push({ Update: {
        TableName: table(),
        Key: keys.segmentCounterDated(bid, range, minute),
        UpdateExpression: `ADD u :one, ${adds.join(', ')}`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      } });
    }
    return out;
  }

  /** A backfill step's dated deltas as Puts of its own items (time order, at most BACKFILL_ITEM_DELTAS each). */
  backfillItems(bid: string, range: number): TransactItem[] {
    const steps: [number, string, number][] = []; // [minute, name, delta]
    for (const [minute, attrs] of this.dated) for (const [name, d] of attrs) if (d !== 0) steps.push([minute, name, d]);
    steps.sort((a, b) => a[0] - b[0]);
    const out: TransactItem[] = [];
    for (let i = 0; i < steps.length; i += BACKFILL_ITEM_DELTAS) {
      const chunk = steps.slice(i, i + BACKFILL_ITEM_DELTAS);
      out.push({ Put: {
        TableName: table(),
        Item: { ...keys.segmentCounterBackfill(bid, range, chunk[0][0], randomBytes(4).toString('hex')), ...datedAttributes(chunk[0][0], chunk) },
        ConditionExpression: 'attribute_not_exists(pk)',
      } });
    }
    return out;
  }
}

/** Dated deltas in a backfill item: about 25 bytes each, so an item stays near 40 KB (the limit is 400 KB). */
export const BACKFILL_ITEM_DELTAS = 1500;

/** `{key}_{seconds from the item's minute}` → delta, from deltas named `{key}_{second of their minute}`. */
export function datedAttributes(itemMinute: number, steps: [number, string, number][]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [minute, name, d] of steps) {
    const sep = name.lastIndexOf('_');
    out[`${name.slice(0, sep)}_${(minute - itemMinute) * 60 + Number(name.slice(sep + 1))}`] = d;
  }
  return out;
}
