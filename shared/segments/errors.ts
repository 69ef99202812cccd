/**
 * The segment error shapes of the contract: format errors are `{ error: 'Datos inválidos', details: [...] }`,
 * rule errors are `{ error: '<what is wrong>. Correct the rule and retry.' }`, and a segment that is missing,
 * not in the caller's business or addressed by a non-UUID id is one and the same 404.
 */
import * as v from 'valibot';
import { ApiError } from '#shared/http/errors.ts';
import { issuePath } from '#shared/http/validation.ts';
import { ScanDeadlineExceeded } from '#shared/contacts/filters/scan.ts';

export interface DetailItem { field: string; message: string }

export const INVALID_DATA = 'Datos inválidos';

export const invalidData = (details: DetailItem[]) => new ApiError(400, { error: INVALID_DATA, details });

/** `field: message` strings (the filter validators' output) → detail items. */
export const toDetails = (messages: string[]): DetailItem[] =>
  messages.map((m) => {
    const at = m.indexOf(': ');
    return at > 0 ? { field: m.slice(0, at), message: m.slice(at + 2) } : { field: '_body', message: m };
  });

/** The endpoint builder's field map → detail items (for its `invalid` option). */
export const invalidFromFieldErrors = (details: Record<string, string[]>) =>
  invalidData(Object.entries(details).flatMap(([field, messages]) => messages.map((message) => ({ field, message }))));

export const issuesToDetails = (issues: readonly v.BaseIssue<unknown>[]): DetailItem[] =>
  issues.map((i) => ({ field: issuePath(i), message: i.message }));

/** A rule (or selection) error: `{ error }`, the message ending with what to do. */
export const ruleInvalid = (message: string, extra: Record<string, unknown> = {}) => new ApiError(400, { error: message, ...extra });

/**
 * Runs a selection of contacts (a preview, a member selection by filters). A scan past its time budget is one
 * and the same 503 `selection_timeout` wherever it happens.
 */
export async function selectWithinBudget<T>(select: () => Promise<T>): Promise<T> {
  try {
    return await select();
  } catch (err) {
    if (err instanceof ScanDeadlineExceeded) {
      throw new ApiError(503, { error: 'selection_timeout', message: 'The contacts could not be selected in time; narrow the rules or filters, or retry later' });
    }
    throw err;
  }
}

export const segmentNotFound = () => new ApiError(404, { error: 'not_found', message: 'Segment not found' });

/** Parses with a valibot schema, or throws the contract's format error. */
export function parseOrInvalid<S extends v.GenericSchema>(schema: S, input: unknown): v.InferOutput<S> {
  const res = v.safeParse(schema, input);
  if (!res.success) throw invalidData(issuesToDetails(res.issues));
  return res.output;
}
