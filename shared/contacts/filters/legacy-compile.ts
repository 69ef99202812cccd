/**
 * Validated legacy (v1/v2) segment rules → the engine's condition tree (directly, not through v3), and their
 * exact v3 equivalent where there is one. The grammar and its validation are in `legacy.ts`.
 */
import { daysAgo, type Condition, type CustomValue } from './predicate.ts';
import { epochSeconds } from './normalize.ts';
import { clientKeyed, lookupTable } from '#shared/lang/client-keys.ts';
import { validateFilters, type Filters } from './filters.ts';
import { groupsOf, isV2, logic, resolveAll, type LegacyRules, type Resolved } from './legacy.ts';

/** Legacy operators with a v3 form: dates, and custom fields. */
const DATE_OPS = lookupTable({ within_days: 'within_days', older_than_days: 'older_than_days', after: 'after', before: 'before' });
const CUSTOM_OPS = lookupTable({ equals: 'equals', contains: 'contains', is_not_empty: 'exists', is_empty: 'exists' });

const asList = (v: unknown): string[] => (Array.isArray(v) ? (v as string[]) : [v as string]);
const dateField = (f: 'created_at' | 'last_contact_at') => (f === 'created_at' ? 'created' : 'lastContact') as 'created' | 'lastContact';

function conditionOf(r: Resolved, nowMs: number): Condition {
  const not = (c: Condition): Condition => ({ k: 'not', c });
  switch (r.field) {
    case 'name': case 'email': case 'phone': {
      const field = r.field;
      switch (r.op) {
        case 'is_empty': return { k: 'textEmpty', field };
        case 'is_not_empty': return not({ k: 'textEmpty', field });
        case 'not_equals': return not({ k: 'text', field, op: 'equals', value: r.value as string });
        case 'not_contains': return not({ k: 'text', field, op: 'contains', value: r.value as string });
        default: return { k: 'text', field, op: r.op as 'equals' | 'contains' | 'starts_with', value: r.value as string };
      }
    }
    case 'tags': {
      const tags = (): Condition[] => asList(r.value).map((tag) => ({ k: 'tag', tag }));
      switch (r.op) {
        case 'is_empty': return { k: 'tagsEmpty' };
        case 'is_not_empty': return not({ k: 'tagsEmpty' });
        case 'contains_any': case 'in': return { k: 'any', of: tags() };
        case 'not_contains': case 'not_in': return { k: 'all', of: tags().map(not) };
        default: return { k: 'all', of: tags() };
      }
    }
    case 'funnel_stage_id': case 'assigned_agent_id': {
      const isStage = r.field === 'funnel_stage_id';
      const empty: Condition = isStage ? { k: 'stageEmpty' } : { k: 'agentEmpty' };
      const inIds = (): Condition => (isStage ? { k: 'stage', ids: asList(r.value) } : { k: 'agent', ids: asList(r.value) });
      switch (r.op) {
        case 'is_empty': return empty;
        case 'is_not_empty': return not(empty);
        case 'not_equals': case 'not_in': return not(inIds());
        default: return inIds();
      }
    }
    case 'origin': {
      const c: Condition = { k: 'origin', values: asList(r.value) };
      return r.op === 'not_equals' || r.op === 'not_in' ? not(c) : c;
    }
    case 'created_at': case 'last_contact_at': {
      const field = dateField(r.field);
      switch (r.op) {
        case 'is_empty': return { k: 'dateEmpty', field };
        case 'is_not_empty': return not({ k: 'dateEmpty', field });
        case 'within_days': return { k: 'date', field, op: 'since', at: daysAgo(nowMs, r.value as number) };
        case 'older_than_days': return { k: 'date', field, op: 'before', at: daysAgo(nowMs, r.value as number) };
        case 'after': return { k: 'date', field, op: 'since', at: epochSeconds(r.value as string)! };
        default: return { k: 'date', field, op: 'before', at: epochSeconds(r.value as string)! };
      }
    }
    case 'custom': {
      const key = r.key!;
      switch (r.op) {
        case 'is_empty': return not({ k: 'customExists', key });
        case 'is_not_empty': return { k: 'customExists', key };
        case 'contains': return { k: 'custom', key, op: 'contains', value: r.value as string };
        case 'not_equals': return not({ k: 'custom', key, op: 'equals', value: r.value as CustomValue });
        default: return { k: 'custom', key, op: 'equals', value: r.value as CustomValue };
      }
    }
    case 'opted_out':
      return { k: 'optedOut', value: r.value as boolean };
  }
}

/** Validated legacy rules → the engine's condition tree (directly, not through v3). */
export function legacyToCondition(rules: LegacyRules, nowMs: number): Condition {
  const groups = groupsOf(rules).map((g): Condition => ({ k: logic(g.operator), of: resolveAll(g.conditions).map((r) => conditionOf(r, nowMs)) }));
  return isV2(rules) ? { k: logic(rules.operator), of: groups } : groups[0];
}

/**
 * The exact v3 equivalent of legacy rules, or null when there is none. Only conjunctions of conditions
 * that v3 expresses one to one are converted (OR of several conditions, not_equals, is_empty and the like have no v3 form).
 */
export function legacyToFilters(rules: LegacyRules): Filters | null {
  const groups = groupsOf(rules);
  const conjunctive = (op: unknown, n: number) => n === 1 || logic(op) === 'all';
  if (!conjunctive(rules.operator, groups.length)) return null;
  if (!groups.every((g) => conjunctive(g.operator, g.conditions.length))) return null;
  const f: Record<string, any> = {};
  const setOnce = (obj: Record<string, any>, key: string, value: unknown) => {
    if (obj[key] !== undefined) return false;
    obj[key] = value;
    return true;
  };
  for (const r of groups.flatMap((g) => resolveAll(g.conditions))) {
    let ok = true;
    switch (r.field) {
      case 'name': case 'email': case 'phone':
        if (r.op !== 'equals' && r.op !== 'contains') return null;
        ok = setOnce((f[r.field] ??= {}), r.op, r.value);
        break;
      case 'tags': {
        const tags = f.tags ??= {};
        const list = asList(r.value);
        if (r.op === 'contains' || r.op === 'contains_all') tags.all = [...(tags.all ?? []), ...list];
        else if (r.op === 'not_contains' || r.op === 'not_in') tags.none = [...(tags.none ?? []), ...list];
        else if (r.op === 'contains_any' || r.op === 'in') ok = setOnce(tags, 'any', list);
        else return null;
        break;
      }
      case 'funnel_stage_id': case 'assigned_agent_id': case 'origin':
        if (r.op !== 'equals' && r.op !== 'in') return null;
        ok = setOnce(f, r.field, r.value);
        break;
      case 'created_at': case 'last_contact_at': {
        const sub = DATE_OPS[r.op];
        if (!sub) return null;
        ok = setOnce((f[r.field] ??= {}), sub, r.value);
        break;
      }
      case 'custom': {
        // Keyed by the client's custom field names (`__proto__` included).
        const cf = (f.custom_fields ??= clientKeyed()) as Record<string, any>;
        const key = r.key!;
        const spec = cf[key] === undefined ? {} : cf[key];
        const op = CUSTOM_OPS[r.op];
        if (!op) return null;
        ok = setOnce(spec, op, op === 'exists' ? r.op === 'is_not_empty' : r.value);
        cf[key] = spec;
        break;
      }
      case 'opted_out':
        ok = setOnce(f, 'opted_out', r.value);
        break;
    }
    if (!ok) return null;
  }
  // Single-condition custom fields read more naturally as `{ key: value }`.
  for (const [key, spec] of Object.entries((f.custom_fields ?? {}) as Record<string, any>)) {
    if (Object.keys(spec).length === 1 && spec.equals !== undefined) f.custom_fields[key] = spec.equals;
  }
  return validateFilters(f, { allowSegmentId: false }).ok ? (f as Filters) : null;
}
