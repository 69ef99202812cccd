/**
 * Per-recipient template parameters from contact fields: `{{contact.name}}`, `{{contact.first_name}}`,
 * `{{contact.phone_number}}`, `{{contact.email}}`, `{{custom_fields.city}}` (also `{{contact.custom_fields.city}}`),
 * with an optional fallback after a bar: `{{contact.name|cliente}}`. Placeholders that name no contact field
 * (e.g. the template's own `{{1}}`) are left as they are.
 *
 * A placeholder whose value is empty and has no fallback makes the recipient skipped (`missing_parameter`):
 * the upstream rejects empty parameters, and a half-filled greeting is worse than no message.
 */
import type { Contact } from '#shared/contacts/model.ts';
import { ownValue } from '#shared/lang/client-keys.ts';

/**
 * A placeholder: a path, then an optional fallback after a bar. A custom field's name is any the contact may have
 * (`fecha-nacimiento`, `mi campo`, `año`), so a path is whatever stands between the braces, trimmed.
 */
const TOKEN = /\{\{\s*([^{}|\s](?:[^{}|]*[^{}|\s])?)\s*(?:\|([^}]*))?\}\}/g;

export class MissingParameter extends Error {
  constructor(readonly placeholder: string) {
    super(`contact has no value for {{${placeholder}}}`);
  }
}

const CONTACT_FIELDS = new Set(['id', 'name', 'first_name', 'phone_number', 'email']);

/** Whether a placeholder path names a contact field (a bare `{{id}}` is too likely something else: the id needs `contact.`). */
function namesField(path: string): boolean {
  const prefixed = path.startsWith('contact.');
  const field = prefixed ? path.slice('contact.'.length) : path;
  return field.startsWith('custom_fields.') || (CONTACT_FIELDS.has(field) && (field !== 'id' || prefixed));
}

/** The value a placeholder path names; `known` false when the path names no contact field at all. */
function lookup(path: string, contact: Contact): { known: boolean; value: unknown } {
  if (!namesField(path)) return { known: false, value: undefined };
  const field = path.startsWith('contact.') ? path.slice('contact.'.length) : path;
  if (field.startsWith('custom_fields.')) return { known: true, value: ownValue(contact.custom_fields, field.slice('custom_fields.'.length)) };
  if (field === 'first_name') return { known: true, value: contact.name?.trim().split(/\s+/)[0] };
  return { known: true, value: (contact as unknown as Record<string, unknown>)[field] };
}

/** Where a placeholder of ours begins (`{{contact.` or `{{custom_fields.`): what follows must be one that names a field. */
const OURS = /\{\{\s*(?:contact|custom_fields)\./g;

/**
 * The placeholders of `value` (every string in it) that begin as ours but name no contact field or do not close
 * (`{{contact.foo}}`, `{{contact.name`): they would reach customers as written. Empty when all are fine.
 */
export function unknownPlaceholders(value: unknown): string[] {
  const found: string[] = [];
  const visit = (x: unknown): void => {
    if (typeof x === 'string') {
      for (const m of x.matchAll(OURS)) {
        const token = new RegExp(TOKEN.source, 'y');
        token.lastIndex = m.index;
        const t = token.exec(x);
        if (!t || !namesField(t[1])) found.push(t ? t[0] : x.slice(m.index, m.index + 40));
      }
    } else if (Array.isArray(x)) x.forEach(visit);
    else if (x && typeof x === 'object') Object.values(x).forEach(visit);
  };
  visit(value);
  return found;
}

export function renderText(text: string, contact: Contact): string {
  return text.replace(TOKEN, (whole, path: string, fallback: string | undefined) => {
    const { known, value } = lookup(path, contact);
    if (!known) return whole;
    const s = value === null || value === undefined ? '' : String(value).trim();
    if (s !== '') return s;
    if (fallback !== undefined && fallback.trim() !== '') return fallback.trim();
    throw new MissingParameter(path);
  });
}

/** A deep copy of `value` with every string rendered for `contact`. Throws MissingParameter. */
export function personalize<T>(value: T, contact: Contact): T {
  if (typeof value === 'string') return renderText(value, contact) as T;
  if (Array.isArray(value)) return value.map((v) => personalize(v, contact)) as T;
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, personalize(v, contact)])) as T;
  }
  return value;
}
