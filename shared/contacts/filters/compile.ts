/**
 * Entry points of the filter engine for callers: compile v3 filters (and an optional free-text search)
 * into one predicate over projected contacts, or test one full contact.
 */
import type { Contact } from '#shared/contacts/model.ts';
import { compileCondition, type Condition, type EvalContext, type Predicate } from './predicate.ts';
import { filtersToCondition, type Filters } from './filters.ts';
import { projectContact } from './projection.ts';

export interface CompileContext extends EvalContext {
  /** Anchor of relative dates (within_days, older_than_days); defaults to now. */
  nowMs?: number;
}

/** The condition of a contact selection: filters and/or search, all of which must hold. */
export function selectionCondition(sel: { filters?: Filters; search?: string }, nowMs = Date.now()): Condition {
  const of: Condition[] = [];
  if (sel.filters) of.push(filtersToCondition(sel.filters, nowMs));
  if (sel.search !== undefined && sel.search.trim() !== '') of.push({ k: 'search', q: sel.search });
  return { k: 'all', of };
}

export function compileFilters(filters: Filters, ctx: CompileContext = {}): Predicate {
  return compileCondition(filtersToCondition(filters, ctx.nowMs ?? Date.now()), ctx);
}

export function compileSelection(sel: { filters?: Filters; search?: string }, ctx: CompileContext = {}): Predicate {
  return compileCondition(selectionCondition(sel, ctx.nowMs ?? Date.now()), ctx);
}

/** Whether a full (active) contact matches; soft-deleted contacts match nothing. */
export function matchesContact(contact: Contact, predicate: Predicate): boolean {
  return contact.deleted_at === null || contact.deleted_at === undefined ? predicate(projectContact(contact)) : false;
}
