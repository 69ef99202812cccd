/**
 * The one evaluation engine. Both front ends (v3 filters in filters.ts, legacy v1/v2 rules in legacy.ts and
 * legacy-compile.ts) and the free-text search translate into a `Condition` tree, and only this module turns a
 * tree into a predicate over a projected contact. Counts, member lists, previews, member selection and contact
 * search all run these predicates, so the front ends cannot drift apart.
 */
import type { ProjectedContact } from './projection.ts';
import { digits, fold, packUuid } from './normalize.ts';

export type TextField = 'name' | 'email' | 'phone';
export type DateField = 'created' | 'lastContact';
export type CustomValue = string | number | boolean;

export type Condition =
  | { k: 'all'; of: Condition[] }
  | { k: 'any'; of: Condition[] }
  | { k: 'not'; c: Condition }
  | { k: 'text'; field: TextField; op: 'contains' | 'equals' | 'starts_with'; value: string }
  | { k: 'textEmpty'; field: TextField }
  | { k: 'tag'; tag: string }
  | { k: 'tagsEmpty' }
  | { k: 'stage'; ids: string[] }
  | { k: 'stageEmpty' }
  | { k: 'origin'; values: string[] }
  | { k: 'agent'; ids: string[] }
  | { k: 'agentEmpty' }
  /** since: at or after `at`; before: strictly before `at` (epoch seconds). A contact without the date matches neither. */
  | { k: 'date'; field: DateField; op: 'since' | 'before'; at: number }
  | { k: 'dateEmpty'; field: DateField }
  | { k: 'custom'; key: string; op: 'equals'; value: CustomValue }
  | { k: 'custom'; key: string; op: 'contains'; value: string }
  | { k: 'customExists'; key: string }
  | { k: 'optedOut'; value: boolean }
  | { k: 'segment'; segmentId: string }
  | { k: 'search'; q: string };

export type Predicate = (c: ProjectedContact) => boolean;

export interface EvalContext {
  /** Membership test of another segment (the `segment_id` filter of member selection). */
  segmentMembers?: (segmentId: string) => Predicate;
}

const DAY = 86_400;
/** "within N days" / "older than N days" relative to `nowMs`, in the projection's unit (epoch seconds). */
export const daysAgo = (nowMs: number, days: number) => Math.floor(nowMs / 1000) - days * DAY;

const customEquals = (stored: unknown, wanted: CustomValue): boolean => {
  if (stored === null || stored === undefined) return false;
  if (typeof wanted === 'string') return typeof stored === 'string' ? fold(stored) === fold(wanted) : String(stored) === wanted.trim();
  if (typeof wanted === 'number') return typeof stored === 'number' ? stored === wanted : typeof stored === 'string' && stored.trim() !== '' && Number(stored) === wanted;
  return typeof stored === 'boolean' ? stored === wanted : typeof stored === 'string' && fold(stored) === String(wanted);
};

/** Own fields only: a field named like an Object.prototype member ("__proto__", "toString") is just a name. */
const customValue = (p: ProjectedContact, key: string): unknown => (Object.hasOwn(p.custom, key) ? p.custom[key] : undefined);

export function compileCondition(c: Condition, ctx: EvalContext = {}): Predicate {
  switch (c.k) {
    case 'all': {
      const ps = c.of.map((x) => compileCondition(x, ctx));
      return (p) => ps.every((f) => f(p));
    }
    case 'any': {
      const ps = c.of.map((x) => compileCondition(x, ctx));
      return (p) => ps.some((f) => f(p));
    }
    case 'not': {
      const f = compileCondition(c.c, ctx);
      return (p) => !f(p);
    }
    case 'text': {
      const isPhone = c.field === 'phone';
      const v = isPhone ? digits(c.value) : fold(c.value);
      const field = c.field;
      if (c.op === 'equals') return (p) => p[field] === v;
      if (c.op === 'starts_with') return (p) => p[field].startsWith(v);
      return (p) => p[field].includes(v);
    }
    case 'textEmpty': {
      const field = c.field;
      return (p) => p[field] === '';
    }
    case 'tag': {
      const t = fold(c.tag);
      return (p) => p.tags.includes(t);
    }
    case 'tagsEmpty':
      return (p) => p.tags.length === 0;
    case 'stage': {
      const ids = new Set(c.ids.map(packUuid));
      return (p) => p.stage !== null && ids.has(p.stage);
    }
    case 'stageEmpty':
      return (p) => p.stage === null;
    case 'origin': {
      const vals = new Set(c.values.map(fold));
      return (p) => vals.has(fold(p.origin));
    }
    case 'agent': {
      const ids = new Set(c.ids.map(packUuid));
      return (p) => p.agent !== null && ids.has(p.agent);
    }
    case 'agentEmpty':
      return (p) => p.agent === null;
    case 'date': {
      const { field, at } = c;
      return c.op === 'since'
        ? (p) => { const d = p[field]; return d !== null && d >= at; }
        : (p) => { const d = p[field]; return d !== null && d < at; };
    }
    case 'dateEmpty': {
      const field = c.field;
      return (p) => p[field] === null;
    }
    case 'custom': {
      const { key } = c;
      if (c.op === 'contains') {
        const v = fold(c.value);
        return (p) => {
          const s = customValue(p, key);
          return s !== null && s !== undefined && fold(String(s)).includes(v);
        };
      }
      const wanted = c.value;
      return (p) => customEquals(customValue(p, key), wanted);
    }
    case 'customExists': {
      const key = c.key;
      return (p) => {
        const s = customValue(p, key);
        return s !== undefined && s !== null && s !== '';
      };
    }
    case 'optedOut': {
      const v = c.value;
      return (p) => p.optedOut === v;
    }
    case 'segment': {
      if (!ctx.segmentMembers) throw new Error('segment_id filter compiled without segment membership context');
      return ctx.segmentMembers(c.segmentId);
    }
    case 'search': {
      const q = fold(c.q);
      // A number typed with separators ("+52 55 1234") still finds the phone; words search name and email
      // (the digits of a query with letters, "Customer 13", never match a phone).
      const d = /^[\d\s+\-().]+$/.test(c.q) ? digits(c.q) : '';
      return (p) => p.name.includes(q) || p.email.includes(q) || (d.length > 0 && p.phone.includes(d));
    }
  }
}

/** The segments a tree refers to (so callers can load their memberships before compiling). */
export function referencedSegments(c: Condition, out = new Set<string>()): Set<string> {
  if (c.k === 'segment') out.add(c.segmentId.toLowerCase());
  else if (c.k === 'all' || c.k === 'any') c.of.forEach((x) => referencedSegments(x, out));
  else if (c.k === 'not') referencedSegments(c.c, out);
  return out;
}
