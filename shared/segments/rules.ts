/**
 * Segment rules: which front end a rules object belongs to, its validation, and its condition tree.
 *   v3      { version: 3, filters }                 → rulesFormat 'filters' (segment_id rejected)
 *   legacy  v1 { operator, conditions } / v2 { version: 2, operator, groups } → rulesFormat 'legacy'
 * Legacy rules are stored exactly as given; v3 rules are stored with their filters in snake_case. These functions only read them.
 */
import { validateFilters, filtersToCondition, type Filters } from '#shared/contacts/filters/filters.ts';
import { isLegacyShape, validateLegacyRules, type LegacyRules } from '#shared/contacts/filters/legacy.ts';
import { legacyToCondition, legacyToFilters } from '#shared/contacts/filters/legacy-compile.ts';
import type { Condition } from '#shared/contacts/filters/predicate.ts';
import { isObject } from '#shared/lang/is-object.ts';

export type RulesFormat = 'filters' | 'legacy';

export type ParsedRules =
  | { ok: true; format: 'filters'; filters: Filters }
  | { ok: true; format: 'legacy'; legacy: LegacyRules }
  | { ok: false; error: string };

/** Every rule error ends with the instruction the contract asks for. */
export const ruleError = (what: string) => `${what.replace(/[.\s]+$/, '')}. Correct the rule and retry.`;


/** Rules that count as "not given": absent, null, an empty object or list. */
export const isEmptyRules = (rules: unknown) =>
  rules === undefined || rules === null || (Array.isArray(rules) && rules.length === 0) || (isObject(rules) && Object.keys(rules).length === 0);

export const isV3Shape = (rules: unknown) => isObject(rules) && rules.version === 3;

/** Rules of the legacy shape (v1 or v2), valid or not. */
export const isLegacyRules = (rules: unknown) => isObject(rules) && isLegacyShape(rules);

export function parseRules(rules: unknown): ParsedRules {
  const fail = (msg: string): ParsedRules => ({ ok: false, error: ruleError(msg) });
  if (isEmptyRules(rules)) return fail('Dynamic segments need rules: send { "version": 3, "filters": { ... } } with at least one filter');
  if (!isObject(rules)) return fail('Invalid segment rules: rules must be an object such as { "version": 3, "filters": { ... } }');
  if (rules.version === 3) {
    const extra = Object.keys(rules).filter((k) => k !== 'version' && k !== 'filters');
    if (extra.length) return fail(`Invalid segment rules: v3 rules take only "version" and "filters"; remove ${extra.map((k) => `"${k}"`).join(', ')}`);
    if (rules.filters === undefined || rules.filters === null) return fail('Invalid segment rules: rules.filters is missing; give at least one filter condition');
    const v = validateFilters(rules.filters, { allowSegmentId: false, path: 'rules.filters' });
    if (!v.ok) return fail(`Invalid segment rules: ${v.errors.join('; ')}`);
    return { ok: true, format: 'filters', filters: v.value };
  }
  // v1 has no version key; an explicit `version: 1` is read as v1 too.
  if (rules.version !== undefined && rules.version !== 1 && rules.version !== 2) {
    return fail(`Unknown rules version ${JSON.stringify(rules.version)}: use version 3 (or the legacy version 2, or v1 without a version)`);
  }
  if (!isLegacyShape(rules)) {
    return fail('Unknown rules version: rules without "version" must be legacy v1 ({ operator, conditions }); for filters use { "version": 3, "filters": { ... } }');
  }
  const v = validateLegacyRules(rules);
  if (!v.ok) return fail(`Invalid segment rules: ${v.errors.join('; ')}`);
  return { ok: true, format: 'legacy', legacy: v.value };
}

/** The condition tree of parsed rules, anchored at `nowMs`. */
export const rulesCondition = (parsed: Extract<ParsedRules, { ok: true }>, nowMs: number): Condition =>
  parsed.format === 'filters' ? filtersToCondition(parsed.filters, nowMs) : legacyToCondition(parsed.legacy, nowMs);

/** The v3 filters shown beside rules: the rules themselves for v3, an exact equivalent (or null) for legacy. */
export const equivalentFilters = (parsed: Extract<ParsedRules, { ok: true }>): Filters | null =>
  parsed.format === 'filters' ? parsed.filters : legacyToFilters(parsed.legacy);
