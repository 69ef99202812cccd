/**
 * Count changes of one range, gathered before they are written: base deltas per counter key and dated deltas
 * per minute item (`{key}_{second of minute}`), and the updates that write them. Zero deltas are dropped, so a
 * change that moves no count writes nothing but its guard.
 */
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

  /** Minute items that would be written if these deltas were committed now. */
  datedItemCount(): number {
    let n = 0;
    for (const attrs of this.dated.values()) if ([...attrs.values()].some((d) => d !== 0)) n++;
    return n;
  }

  hasBase(): boolean {
    return [...this.base.values()].some((d) => d !== 0);
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
}
