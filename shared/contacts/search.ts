/**
 * `GET /contacts/v1?search=&filters=`: the segments' filter grammar and free-text search, evaluated by the
 * same engine segments use (shared/contacts/filters), so a contact list and a segment never disagree.
 */
import { validationError } from '#shared/http/errors.ts';
import { filtersToCondition, validateFilters } from './filters/filters.ts';
import { compileCondition, type Condition } from './filters/predicate.ts';
import { projectContact } from './filters/projection.ts';
import type { Contact } from './model.ts';

/** A predicate over contacts, or undefined when neither filters nor search narrow the list. 400 on bad filters. */
export function contactMatcher(filtersParam: string | undefined, search: string | undefined): ((c: Contact) => boolean) | undefined {
  const of: Condition[] = [];
  if (filtersParam !== undefined && filtersParam.trim() !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(filtersParam);
    } catch {
      throw validationError({ filters: ['must be URL-encoded JSON'] }, 'filters is not valid JSON');
    }
    const checked = validateFilters(parsed, { allowSegmentId: false, path: 'filters' });
    if (!checked.ok) throw validationError({ filters: checked.errors }, `Invalid filters: ${checked.errors.join('; ')}`);
    of.push(filtersToCondition(checked.value, Date.now()));
  }
  const q = search?.trim();
  if (q) of.push({ k: 'search', q });
  if (of.length === 0) return undefined;
  const predicate = compileCondition({ k: 'all', of });
  return (c) => predicate(projectContact(c));
}
