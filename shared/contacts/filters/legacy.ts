/**
 * The legacy front end: v1 and v2 segment rules, accepted and stored as given, never migrated.
 *
 *   v1: { operator: 'AND' | 'OR', conditions: [Condition, ...] }                 (no `version`)
 *   v2: { version: 2, operator: 'AND' | 'OR', groups: [{ operator?: 'AND' | 'OR' (default AND), conditions: [...] }, ...] }
 *   Condition: { field, operator, value? }
 *
 * Fields (camelCase aliases accepted) and their operators:
 *   name, email, phone (phone_number)   equals, not_equals, contains, not_contains, starts_with, is_empty, is_not_empty
 *   tags                                 contains (string: has the tag; list: has all), contains_all (list),
 *                                        contains_any / in (list: has one), not_contains / not_in (string or list: has none),
 *                                        is_empty, is_not_empty
 *   funnel_stage_id, assigned_agent_id   equals, not_equals (UUID); in, not_in (UUID list); is_empty, is_not_empty
 *   origin                               equals, not_equals (string); in, not_in (list)
 *   created_at, last_contact_at          within_days (int ≥1: at or after now−N days), older_than_days (int ≥1: before now−N days),
 *                                        after, before (ISO 8601), is_empty, is_not_empty
 *   custom_fields.<key>                  equals, not_equals (string, number, boolean), contains (string), is_empty, is_not_empty
 *   opted_out                            equals (boolean)
 * Same comparison rules as v3 (case- and accent-insensitive text, digits-only phone), because both front
 * ends compile to the same engine (predicate.ts). This file is the grammar (aliases, operators, validation, the
 * resolved conditions of validated rules); `legacy-compile.ts` turns validated rules into the engine's condition
 * tree and into their v3 equivalent.
 */
import { UUID_RE } from '#shared/http/schemas.ts';
import { digits, epochSeconds } from './normalize.ts';
import { isUnstorableKey, lookupTable, UNSTORABLE_KEYS, unstorableKeysOf } from '#shared/lang/client-keys.ts';
import type { ValidationResult } from './filters.ts';
import { isObject } from '#shared/lang/is-object.ts';

export interface LegacyCondition { field: string; operator: string; value?: unknown; key?: string }
export interface LegacyRulesV1 { operator: 'AND' | 'OR'; conditions: LegacyCondition[] }
export interface LegacyRulesV2 { version: 2; operator: 'AND' | 'OR'; groups: { operator?: 'AND' | 'OR'; conditions: LegacyCondition[] }[] }
export type LegacyRules = LegacyRulesV1 | LegacyRulesV2;

type Field = 'name' | 'email' | 'phone' | 'tags' | 'funnel_stage_id' | 'assigned_agent_id' | 'origin' | 'created_at' | 'last_contact_at' | 'custom' | 'opted_out';

const FIELD_ALIASES = lookupTable<Field>({
  name: 'name', email: 'email', phone: 'phone', phone_number: 'phone', phoneNumber: 'phone',
  tags: 'tags', tag: 'tags',
  funnel_stage_id: 'funnel_stage_id', funnelStageId: 'funnel_stage_id', funnel_stage: 'funnel_stage_id', stage_id: 'funnel_stage_id',
  assigned_agent_id: 'assigned_agent_id', assignedAgentId: 'assigned_agent_id',
  origin: 'origin', source: 'origin',
  created_at: 'created_at', createdAt: 'created_at',
  last_contact_at: 'last_contact_at', lastContactAt: 'last_contact_at',
  opted_out: 'opted_out', optedOut: 'opted_out',
  custom_field: 'custom', customField: 'custom',
});

const TEXT_OPS = ['equals', 'not_equals', 'contains', 'not_contains', 'starts_with', 'is_empty', 'is_not_empty'];
const ID_OPS = ['equals', 'not_equals', 'in', 'not_in', 'is_empty', 'is_not_empty'];
const OPERATORS: Record<Field, string[]> = {
  name: TEXT_OPS, email: TEXT_OPS, phone: TEXT_OPS,
  tags: ['contains', 'contains_all', 'contains_any', 'in', 'not_contains', 'not_in', 'is_empty', 'is_not_empty'],
  funnel_stage_id: ID_OPS, assigned_agent_id: ID_OPS,
  origin: ['equals', 'not_equals', 'in', 'not_in'],
  created_at: ['within_days', 'older_than_days', 'after', 'before', 'is_empty', 'is_not_empty'],
  last_contact_at: ['within_days', 'older_than_days', 'after', 'before', 'is_empty', 'is_not_empty'],
  custom: ['equals', 'not_equals', 'contains', 'is_empty', 'is_not_empty'],
  opted_out: ['equals'],
};
const OP_ALIASES = lookupTable({
  eq: 'equals', '=': 'equals', equal: 'equals', is: 'equals', neq: 'not_equals', '!=': 'not_equals', not_equal: 'not_equals', is_not: 'not_equals',
  has: 'contains', includes: 'contains', not_has: 'not_contains', has_any: 'contains_any', has_all: 'contains_all',
  within_last_days: 'within_days', in_last_days: 'within_days', more_than_days_ago: 'older_than_days',
  exists: 'is_not_empty', not_exists: 'is_empty',
});

export interface Resolved { field: Field; op: string; value: unknown; key?: string }

const isLogic = (x: unknown) => typeof x === 'string' && ['AND', 'OR'].includes(x.toUpperCase());

export const isLegacyShape = (rules: Record<string, unknown>) =>
  rules.version === 2 || ((rules.version === undefined || rules.version === 1) && ('conditions' in rules || 'operator' in rules || 'groups' in rules));

function resolveField(raw: unknown): { field?: Field; key?: string } {
  if (typeof raw !== 'string') return {};
  const m = /^(?:custom_fields|customFields|custom)\.(.+)$/.exec(raw);
  if (m) return { field: 'custom', key: m[1] };
  return { field: FIELD_ALIASES[raw] };
}

function validateCondition(c: unknown, where: string, errors: string[]): Resolved | undefined {
  const err = (msg: string) => { errors.push(`${where}: ${msg}`); return undefined; };
  if (!isObject(c)) return err('must be an object with field, operator and value');
  const { field, key: dottedKey } = resolveField(c.field);
  if (!field) return err(`unknown field ${JSON.stringify(c.field ?? null)} (allowed: name, email, phone, tags, funnel_stage_id, assigned_agent_id, origin, created_at, last_contact_at, opted_out, custom_fields.<key>)`);
  const key = dottedKey ?? (typeof c.key === 'string' ? c.key : undefined);
  if (field === 'custom' && (!key || key.trim() === '')) return err('custom field conditions need the field name, e.g. "custom_fields.city"');
  if (field === 'custom' && isUnstorableKey(key!)) return err(`custom field names may not be ${UNSTORABLE_KEYS.join(', ')}`);
  const rawOp = typeof c.operator === 'string' ? c.operator.toLowerCase() : undefined;
  const op = rawOp ? OP_ALIASES[rawOp] ?? rawOp : undefined;
  if (!op || !OPERATORS[field].includes(op)) return err(`unknown operator ${JSON.stringify(c.operator ?? null)} for field ${c.field} (allowed: ${OPERATORS[field].join(', ')})`);
  const value = c.value;
  if (op === 'is_empty' || op === 'is_not_empty') return { field, op, value: undefined, key };

  const emptyValue = () => err('value is empty; give a value');
  if (value === undefined || value === null || value === '' || (Array.isArray(value) && value.length === 0)) return emptyValue();
  const nonEmptyStrings = (xs: unknown[]) => xs.every((x) => typeof x === 'string' && x.trim() !== '');
  switch (field) {
    case 'name': case 'email': case 'phone':
      if (typeof value !== 'string' || value.trim() === '') return err('value must be a non-empty string');
      if (field === 'phone' && digits(value).length === 0) return err('phone has no digits; give part of the number, e.g. "5512"');
      break;
    case 'tags':
      if (typeof value === 'string') { if (value.trim() === '') return emptyValue(); if (op === 'contains_any' || op === 'contains_all' || op === 'in') return err('value must be a list of tags'); }
      else if (!Array.isArray(value) || !nonEmptyStrings(value)) return err('value must be a tag or a non-empty list of non-empty tags');
      break;
    case 'funnel_stage_id': case 'assigned_agent_id': {
      const list = op === 'in' || op === 'not_in';
      if (list ? !(Array.isArray(value) && value.every((x) => typeof x === 'string' && UUID_RE.test(x))) : !(typeof value === 'string' && UUID_RE.test(value))) {
        return err(list ? 'value must be a non-empty list of UUIDs' : 'value must be a UUID');
      }
      break;
    }
    case 'origin':
      if (op === 'in' || op === 'not_in' ? !(Array.isArray(value) && nonEmptyStrings(value)) : !(typeof value === 'string' && value.trim() !== '')) {
        return err(op === 'in' || op === 'not_in' ? 'value must be a non-empty list of strings' : 'value must be a non-empty string');
      }
      break;
    case 'created_at': case 'last_contact_at':
      if (op === 'within_days' || op === 'older_than_days') {
        if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 36_500) return err('value must be a whole number of days from 1 to 36500');
      } else if (typeof value !== 'string' || epochSeconds(value) === null) return err('value must be an ISO 8601 date or date-time');
      break;
    case 'custom':
      if (op === 'contains' ? !(typeof value === 'string' && value.trim() !== '')
        : !((typeof value === 'string' && value.trim() !== '') || (typeof value === 'number' && Number.isFinite(value)) || typeof value === 'boolean')) {
        return err('value must be a non-empty string, a number or a boolean');
      }
      break;
    case 'opted_out':
      if (typeof value !== 'boolean') return err('value must be true or false');
      break;
  }
  return { field, op, value, key };
}

function validateConditions(list: unknown, where: string, errors: string[]): void {
  if (!Array.isArray(list)) { errors.push(`${where}: must be a list of conditions`); return; }
  if (list.length === 0) { errors.push(`${where}: has no condition; give at least one`); return; }
  list.forEach((c, i) => {
    refuseUnstorableKeys(c, `${where}[${i}]`, errors);
    validateCondition(c, `${where}[${i}]`, errors);
  });
}

/** Legacy rules are stored as sent, so a key the table cannot keep is refused instead of failing the write. */
function refuseUnstorableKeys(x: unknown, where: string, errors: string[]): void {
  for (const key of unstorableKeysOf(x)) errors.push(`${where}.${key}: is not a rule key (a stored rule cannot hold ${UNSTORABLE_KEYS.join(', ')}); remove it`);
}

/** Validates v1/v2 rules; `path` prefixes messages. */
export function validateLegacyRules(rules: Record<string, unknown>, path = 'rules'): ValidationResult<LegacyRules> {
  const errors: string[] = [];
  refuseUnstorableKeys(rules, path, errors);
  if (!isLogic(rules.operator)) errors.push(`${path}.operator: must be "AND" or "OR"`);
  if (rules.version === 2) {
    if (!Array.isArray(rules.groups)) errors.push(`${path}.groups: must be a list of groups`);
    else if (rules.groups.length === 0) errors.push(`${path}.groups: has no condition; give at least one group with conditions`);
    else rules.groups.forEach((g, i) => {
      const where = `${path}.groups[${i}]`;
      if (!isObject(g)) { errors.push(`${where}: must be an object with operator and conditions`); return; }
      refuseUnstorableKeys(g, where, errors);
      if (g.operator !== undefined && !isLogic(g.operator)) errors.push(`${where}.operator: must be "AND" or "OR"`);
      validateConditions(g.conditions, `${where}.conditions`, errors);
    });
  } else {
    validateConditions(rules.conditions, `${path}.conditions`, errors);
  }
  return errors.length ? { ok: false, errors } : { ok: true, value: rules as unknown as LegacyRules };
}

// ---- validated rules, as legacy-compile.ts reads them ----------------------------------------------------

export const logic = (op: unknown): 'all' | 'any' => (typeof op === 'string' && op.toUpperCase() === 'OR' ? 'any' : 'all');

export const resolveAll = (conditions: LegacyCondition[]): Resolved[] => conditions.map((c) => validateCondition(c, '', [])!);

/** v2 only by its version: a stray `groups` key on v1 rules is not read (it was not validated). */
export const isV2 = (rules: LegacyRules): rules is LegacyRulesV2 => (rules as { version?: unknown }).version === 2;

export const groupsOf = (rules: LegacyRules) =>
  isV2(rules) ? rules.groups.map((g) => ({ operator: g.operator ?? 'AND', conditions: g.conditions })) : [{ operator: rules.operator, conditions: rules.conditions }];
