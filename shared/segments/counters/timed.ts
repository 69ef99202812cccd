/**
 * A segment's rules as a function of time. Relative dates (`within_days`, `older_than_days`, in v3 and legacy
 * rules alike) compile to date conditions anchored at "now"; everything else is fixed. So a contact's match is a
 * step function of time whose only breakpoints are its dates plus the rules' offsets: the counters store the
 * match now (base) and each future step as a dated delta, and a count is exact at any instant without a rescan.
 *
 * The relative conditions are found by building the condition tree at two anchors one second apart: a date
 * bound that moves with the anchor is relative (offset = how far before now it is), any other is absolute.
 */
import { compileCondition, type Condition, type DateField } from '#shared/contacts/filters/predicate.ts';
import type { ProjectedContact } from '#shared/contacts/filters/projection.ts';

/** (contact, now in epoch seconds) → match. */
export type TimedPredicate = (p: ProjectedContact, nowSec: number) => boolean;

export interface Timed {
  test: TimedPredicate;
  /** The instants (epoch seconds) at which some relative condition flips for this contact. */
  breakpoints: (p: ProjectedContact) => number[];
}

interface Relative { field: DateField; offset: number }

function build(a: Condition, b: Condition, rel: Relative[]): TimedPredicate {
  if (a.k !== b.k) throw new Error('rules build different trees at different anchors');
  switch (a.k) {
    case 'all': {
      const ps = a.of.map((x, i) => build(x, (b as typeof a).of[i], rel));
      return (p, t) => ps.every((f) => f(p, t));
    }
    case 'any': {
      const ps = a.of.map((x, i) => build(x, (b as typeof a).of[i], rel));
      return (p, t) => ps.some((f) => f(p, t));
    }
    case 'not': {
      const f = build(a.c, (b as typeof a).c, rel);
      return (p, t) => !f(p, t);
    }
    case 'date': {
      const other = b as typeof a;
      if (other.at === a.at) break;
      // Built at anchor 0 s: at = 0 − offset. At `t` the bound is t − offset.
      const offset = -a.at;
      const { field } = a;
      rel.push({ field, offset });
      return a.op === 'since'
        ? (p, t) => { const d = p[field]; return d !== null && d >= t - offset; }
        : (p, t) => { const d = p[field]; return d !== null && d < t - offset; };
    }
    default:
      break;
  }
  const f = compileCondition(a);
  return (p) => f(p);
}

/** `conditionAt(nowMs)` builds the rules' condition tree anchored at nowMs. */
export function timed(conditionAt: (nowMs: number) => Condition): Timed {
  const rel: Relative[] = [];
  const test = build(conditionAt(0), conditionAt(1000), rel);
  // since: d ≥ t − off holds up to t = d + off; before: d < t − off holds from t = d + off + 1. Both flip at d + off + 1.
  const breakpoints = (p: ProjectedContact) => {
    const out: number[] = [];
    for (const r of rel) {
      const d = p[r.field];
      if (d !== null) out.push(d + r.offset + 1);
    }
    return out;
  };
  return { test, breakpoints };
}

/** A contact's share of a count from `t0` on: its match at t0 and each later change (instant, ±1). */
export interface Contribution { now: number; steps: [number, number][] }

export function contribution(rule: Timed, p: ProjectedContact | null, t0: number): Contribution {
  if (!p) return { now: 0, steps: [] };
  const now = rule.test(p, t0) ? 1 : 0;
  const steps: [number, number][] = [];
  const points = [...new Set(rule.breakpoints(p).filter((b) => b > t0))].sort((x, y) => x - y);
  let prev = now;
  for (const b of points) {
    const v = rule.test(p, b) ? 1 : 0;
    if (v !== prev) steps.push([b, v - prev]);
    prev = v;
  }
  return { now, steps };
}
