/**
 * valibot issues → the contract's `details: { <field>: [message] }` map.
 */
import * as v from 'valibot';
import { clientKeyed } from '#shared/lang/client-keys.ts';
import { type ApiError, type FieldErrors, notFound, validationError } from './errors.ts';

export const issuePath = (issue: v.BaseIssue<unknown>): string => {
  const path = v.getDotPath(issue);
  return path && path.length > 0 ? path : '_body';
};

/** An absent required member, which valibot words as its object's message ("Invalid key: Expected ..."): named instead. */
const messageOf = (issue: v.BaseIssue<unknown>, field: string): string =>
  issue.kind === 'schema' && issue.received === 'undefined' && /object$/.test(issue.type) && field !== '_body' ? `${field} is required` : issue.message;

export const toFieldErrors = (issues: readonly v.BaseIssue<unknown>[]): FieldErrors => {
  // Field paths come from the client's own keys (`toString`, `__proto__`...).
  const details: FieldErrors = clientKeyed();
  for (const issue of issues) {
    const field = issuePath(issue);
    (details[field] ??= []).push(messageOf(issue, field));
  }
  return details;
};

/** A readable one-line summary: "to: Invalid format; text.body: Required" (what is wrong with the whole body unprefixed). */
export const summarize = (details: FieldErrors): string =>
  Object.entries(details)
    .map(([field, messages]) => (field === '_body' ? messages.join(', ') : `${field}: ${messages.join(', ')}`))
    .join('; ');

/**
 * An endpoint's `invalid` for a route whose path names a resource: an id that cannot be one names nothing (404
 * `<what> not found`), while a bad body or query is 400 `validation_error`.
 */
export const idNotFound = (what: string) => (details: FieldErrors, where: 'body' | 'query' | 'params'): ApiError =>
  where === 'params' ? notFound(`${what} not found`) : validationError(details, `Invalid ${where}: ${summarize(details)}`);
