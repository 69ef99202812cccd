/**
 * The v3 front end: the contact advanced-search filters (snake_case keys), used by v3 segment rules,
 * member selection and `GET /contacts/v1?filters=`. Validation is strict: an unknown key at any level,
 * an empty value, list or object, or a filter without conditions is an error. Keys are stored in snake_case;
 * the camelCase spelling of a known key (`funnelStageId`, `lastContactAt`, `withinDays`...) is renamed.
 *
 * Grammar (every key optional, at least one present, all present keys must hold — AND):
 *   phone, name, email      string (= contains) or { contains?: string, equals?: string } (≥1 key)
 *                           name/email: case- and accent-insensitive; phone: digits only, needs ≥1 digit
 *   tags                    { any?: string[], all?: string[], none?: string[] } (≥1 key, non-empty lists)
 *   funnel_stage_id         UUID or non-empty UUID[] (the contact is in one of these stages)
 *   origin                  string or non-empty string[] (api, bulk, inbound, outbound, import...)
 *   created_at,
 *   last_contact_at         { within_days?: int ≥1, older_than_days?: int ≥1, after?: ISO, before?: ISO } (≥1 key)
 *                           within_days N: at or after now−N days; older_than_days N: before now−N days;
 *                           after: at or after; before: strictly before. A contact without the date matches none.
 *   custom_fields           { <key>: string | number | boolean (equals) | { equals?, contains?: string, exists?: boolean } }
 *   assigned_agent_id       UUID or non-empty UUID[]
 *   opted_out               boolean
 *   segment_id              UUID: member of that segment (member selection and contact search only)
 */
import { UUID_RE } from '#shared/http/schemas.ts';
import { clientKeyed, isUnstorableKey, lookupTable, UNSTORABLE_KEYS } from '#shared/lang/client-keys.ts';
import { daysAgo, type Condition, type CustomValue } from './predicate.ts';
import { digits, epochSeconds } from './normalize.ts';
import { isObject } from '#shared/lang/is-object.ts';

export type TextFilter = string | { contains?: string; equals?: string };
export interface DateFilter { within_days?: number; older_than_days?: number; after?: string; before?: string }
export type CustomFilter = CustomValue | { equals?: CustomValue; contains?: string; exists?: boolean };

export interface Filters {
  phone?: TextFilter;
  name?: TextFilter;
  email?: TextFilter;
  tags?: { any?: string[]; all?: string[]; none?: string[] };
  funnel_stage_id?: string | string[];
  origin?: string | string[];
  created_at?: DateFilter;
  last_contact_at?: DateFilter;
  custom_fields?: Record<string, CustomFilter>;
  assigned_agent_id?: string | string[];
  opted_out?: boolean;
  segment_id?: string;
}

export const FILTER_KEYS = [
  'phone', 'name', 'email', 'tags', 'funnel_stage_id', 'origin', 'created_at', 'last_contact_at',
  'custom_fields', 'assigned_agent_id', 'opted_out', 'segment_id',
] as const;

export type ValidationResult<T> = { ok: true; value: T } | { ok: false; errors: string[] };

const MAX_TEXT = 200;
const MAX_LIST = 500;
const MAX_DAYS = 36_500;

/** camelCase spellings of filter keys; filters are stored in snake_case, so these are renamed on the way in. */
const KEY_ALIASES = lookupTable({
  funnelStageId: 'funnel_stage_id', createdAt: 'created_at', lastContactAt: 'last_contact_at', customFields: 'custom_fields',
  assignedAgentId: 'assigned_agent_id', optedOut: 'opted_out', segmentId: 'segment_id',
});
const DATE_KEY_ALIASES = lookupTable({ withinDays: 'within_days', olderThanDays: 'older_than_days' });

/** A copy of `x` with aliased keys renamed (one level); a key given in both spellings is an error. */
function renameKeys(x: Record<string, unknown>, aliases: Readonly<Record<string, string | undefined>>, where: string, errors: string[]): Record<string, unknown> {
  const out = clientKeyed<unknown>();
  for (const [k, v] of Object.entries(x)) {
    const name = aliases[k] ?? k;
    if (name in out) errors.push(`${where}.${name}: given twice (as ${name} and its camelCase spelling); keep one`);
    out[name] = v;
  }
  return out;
}

/** Filters with their keys in snake_case (camelCase spellings of known keys renamed; custom field names untouched). */
function toSnakeCase(input: Record<string, unknown>, base: string, errors: string[]): Record<string, unknown> {
  const out = renameKeys(input, KEY_ALIASES, base, errors);
  for (const key of ['created_at', 'last_contact_at']) {
    if (isObject(out[key])) out[key] = renameKeys(out[key] as Record<string, unknown>, DATE_KEY_ALIASES, `${base}.${key}`, errors);
  }
  return out;
}

/**
 * Validates filters strictly; `path` prefixes messages (e.g. `rules.filters`). The value returned is in
 * snake_case (the stored form), whichever spelling of the known keys was sent.
 */
export function validateFilters(raw: unknown, opts: { allowSegmentId: boolean; path?: string }): ValidationResult<Filters> {
  const base = opts.path ?? 'filters';
  const errors: string[] = [];
  const err = (where: string, msg: string) => errors.push(`${where}: ${msg}`);

  if (!isObject(raw)) return { ok: false, errors: [`${base}: must be an object of filters`] };
  const input = toSnakeCase(raw, base, errors);
  const entries = Object.entries(input);
  if (entries.length === 0) return { ok: false, errors: [`${base}: is empty; give at least one filter condition`] };

  const nonEmptyString = (where: string, x: unknown): x is string => {
    if (typeof x !== 'string' || x.trim() === '') { err(where, 'must be a non-empty string'); return false; }
    if (x.length > MAX_TEXT) { err(where, `must be at most ${MAX_TEXT} characters`); return false; }
    return true;
  };
  const uuidValue = (where: string, x: unknown) => {
    if (typeof x !== 'string' || !UUID_RE.test(x)) err(where, 'must be a UUID');
  };
  const list = (where: string, x: unknown, item: (w: string, v: unknown) => void) => {
    if (!Array.isArray(x)) { err(where, 'must be a list'); return; }
    if (x.length === 0) { err(where, 'must not be an empty list'); return; }
    if (x.length > MAX_LIST) { err(where, `must hold at most ${MAX_LIST} values`); return; }
    x.forEach((v, i) => item(`${where}[${i}]`, v));
  };
  const oneOrMany = (where: string, x: unknown, item: (w: string, v: unknown) => void) =>
    Array.isArray(x) ? list(where, x, item) : item(where, x);
  const strictObject = (where: string, x: unknown, allowed: readonly string[]): x is Record<string, unknown> => {
    if (!isObject(x)) { err(where, `must be an object with ${allowed.join(' and/or ')}`); return false; }
    const ks = Object.keys(x);
    if (ks.length === 0) { err(where, `is an empty object; give ${allowed.join(' and/or ')}`); return false; }
    const unknown = ks.filter((k) => !allowed.includes(k));
    for (const k of unknown) err(`${where}.${k}`, `unknown key (allowed: ${allowed.join(', ')})`);
    return unknown.length === 0;
  };

  const text = (key: 'phone' | 'name' | 'email', x: unknown) => {
    const where = `${base}.${key}`;
    const check = (w: string, v: unknown) => {
      if (!nonEmptyString(w, v)) return;
      if (key === 'phone' && digits(v).length === 0) err(w, 'phone has no digits; give part of the number, e.g. "5512"');
    };
    if (typeof x === 'string') return check(where, x);
    if (!strictObject(where, x, ['contains', 'equals'])) return;
    for (const [k, v] of Object.entries(x)) check(`${where}.${k}`, v);
  };
  const date = (key: 'created_at' | 'last_contact_at', x: unknown) => {
    const where = `${base}.${key}`;
    if (!strictObject(where, x, ['within_days', 'older_than_days', 'after', 'before'])) return;
    for (const [k, v] of Object.entries(x)) {
      if (k === 'within_days' || k === 'older_than_days') {
        if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > MAX_DAYS) err(`${where}.${k}`, `must be a whole number of days from 1 to ${MAX_DAYS}`);
      } else if (typeof v !== 'string' || v.trim() === '' || epochSeconds(v) === null) {
        err(`${where}.${k}`, 'must be an ISO 8601 date or date-time');
      }
    }
  };
  const custom = (x: unknown) => {
    const where = `${base}.custom_fields`;
    if (!isObject(x)) return err(where, 'must be an object of custom field conditions');
    const ks = Object.entries(x);
    if (ks.length === 0) return err(where, 'is an empty object; give at least one custom field');
    for (const [k, v] of ks) {
      const w = `${where}.${k}`;
      if (k.trim() === '' || k.length > 100) { err(w, 'custom field name must be 1-100 characters'); continue; }
      if (isUnstorableKey(k)) { err(w, `custom field names may not be ${UNSTORABLE_KEYS.join(', ')}`); continue; }
      if (typeof v === 'string') { nonEmptyString(w, v); continue; }
      if (typeof v === 'number' ? Number.isFinite(v) : typeof v === 'boolean') continue;
      if (!strictObject(w, v, ['equals', 'contains', 'exists'])) continue;
      for (const [op, val] of Object.entries(v)) {
        if (op === 'contains') nonEmptyString(`${w}.contains`, val);
        else if (op === 'exists') { if (typeof val !== 'boolean') err(`${w}.exists`, 'must be true or false'); }
        else if (typeof val === 'string') nonEmptyString(`${w}.equals`, val);
        else if (!(typeof val === 'number' && Number.isFinite(val)) && typeof val !== 'boolean') err(`${w}.equals`, 'must be a non-empty string, a number or a boolean');
      }
    }
  };

  for (const [key, value] of entries) {
    const where = `${base}.${key}`;
    if (!(FILTER_KEYS as readonly string[]).includes(key)) {
      err(where, `unknown filter key (allowed: ${FILTER_KEYS.filter((k) => opts.allowSegmentId || k !== 'segment_id').join(', ')})`);
      continue;
    }
    if (value === null || value === undefined || value === '') { err(where, 'is empty; give a value'); continue; }
    switch (key) {
      case 'phone': case 'name': case 'email': text(key, value); break;
      case 'tags':
        if (strictObject(where, value, ['any', 'all', 'none'])) {
          for (const [k, v] of Object.entries(value)) list(`${where}.${k}`, v, nonEmptyString);
        }
        break;
      case 'funnel_stage_id': case 'assigned_agent_id': oneOrMany(where, value, uuidValue); break;
      case 'origin': oneOrMany(where, value, nonEmptyString); break;
      case 'created_at': case 'last_contact_at': date(key, value); break;
      case 'custom_fields': custom(value); break;
      case 'opted_out': if (typeof value !== 'boolean') err(where, 'must be true or false'); break;
      case 'segment_id':
        if (!opts.allowSegmentId) err(where, 'segment_id is not allowed here: only a member selection takes it (a segment cannot be defined by another segment, and a contact search filters by the fields themselves)');
        else uuidValue(where, value);
        break;
    }
  }
  return errors.length ? { ok: false, errors } : { ok: true, value: input as Filters };
}

const textCondition = (field: 'name' | 'email' | 'phone', f: TextFilter): Condition[] =>
  typeof f === 'string'
    ? [{ k: 'text', field, op: 'contains', value: f }]
    : [
        ...(f.contains !== undefined ? [{ k: 'text', field, op: 'contains', value: f.contains } as Condition] : []),
        ...(f.equals !== undefined ? [{ k: 'text', field, op: 'equals', value: f.equals } as Condition] : []),
      ];

const dateCondition = (field: 'created' | 'lastContact', f: DateFilter, nowMs: number): Condition[] => {
  const out: Condition[] = [];
  if (f.within_days !== undefined) out.push({ k: 'date', field, op: 'since', at: daysAgo(nowMs, f.within_days) });
  if (f.older_than_days !== undefined) out.push({ k: 'date', field, op: 'before', at: daysAgo(nowMs, f.older_than_days) });
  if (f.after !== undefined) out.push({ k: 'date', field, op: 'since', at: epochSeconds(f.after)! });
  if (f.before !== undefined) out.push({ k: 'date', field, op: 'before', at: epochSeconds(f.before)! });
  return out;
};

const many = <T>(x: T | T[]): T[] => (Array.isArray(x) ? x : [x]);

/** Validated v3 filters → the engine's condition tree. `nowMs` anchors the relative dates. */
export function filtersToCondition(f: Filters, nowMs: number): Condition {
  const of: Condition[] = [];
  if (f.phone !== undefined) of.push(...textCondition('phone', f.phone));
  if (f.name !== undefined) of.push(...textCondition('name', f.name));
  if (f.email !== undefined) of.push(...textCondition('email', f.email));
  if (f.tags) {
    if (f.tags.any) of.push({ k: 'any', of: f.tags.any.map((tag) => ({ k: 'tag', tag }) as Condition) });
    if (f.tags.all) of.push(...f.tags.all.map((tag) => ({ k: 'tag', tag }) as Condition));
    if (f.tags.none) of.push(...f.tags.none.map((tag) => ({ k: 'not', c: { k: 'tag', tag } }) as Condition));
  }
  if (f.funnel_stage_id !== undefined) of.push({ k: 'stage', ids: many(f.funnel_stage_id) });
  if (f.origin !== undefined) of.push({ k: 'origin', values: many(f.origin) });
  if (f.created_at) of.push(...dateCondition('created', f.created_at, nowMs));
  if (f.last_contact_at) of.push(...dateCondition('lastContact', f.last_contact_at, nowMs));
  if (f.custom_fields) {
    for (const [key, v] of Object.entries(f.custom_fields)) {
      if (typeof v !== 'object') { of.push({ k: 'custom', key, op: 'equals', value: v }); continue; }
      if (v.equals !== undefined) of.push({ k: 'custom', key, op: 'equals', value: v.equals });
      if (v.contains !== undefined) of.push({ k: 'custom', key, op: 'contains', value: v.contains });
      if (v.exists !== undefined) of.push(v.exists ? { k: 'customExists', key } : { k: 'not', c: { k: 'customExists', key } });
    }
  }
  if (f.assigned_agent_id !== undefined) of.push({ k: 'agent', ids: many(f.assigned_agent_id) });
  if (f.opted_out !== undefined) of.push({ k: 'optedOut', value: f.opted_out });
  if (f.segment_id !== undefined) of.push({ k: 'segment', segmentId: f.segment_id });
  return { k: 'all', of };
}
