/**
 * Page cursors: the DynamoDB key where the previous page stopped, base64url-encoded JSON.
 *
 * One strict reader serves every list. A cursor must decode to exactly the attributes of that list's key, each
 * a string, with the partition attributes equal to the caller's own and each sort attribute under its list's
 * prefix. Anything else — garbled text, an extra or missing attribute, a number or an object where a string
 * belongs, another business's or another list's partition — is 400 `invalid_cursor` before DynamoDB sees it
 * (DynamoDB would answer a ValidationException, a 500, or page through a partition the caller does not own).
 */
import { badRequest } from './errors.ts';

/** Each key attribute of a list: its exact value (a partition), or the prefix its value starts with (a sort key). */
export type CursorShape = Record<string, string | { prefix: string }>;

export const encodeCursor = (key: Record<string, unknown> | undefined): string | null =>
  key ? Buffer.from(JSON.stringify(key)).toString('base64url') : null;

const invalidCursor = () => badRequest('invalid_cursor', 'The cursor is not valid for this list; start again without one');

function parse(cursor: string): unknown {
  try {
    return JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}

/** The start key a cursor names, undefined without one; throws 400 `invalid_cursor` unless it fits `shape` exactly. */
export function decodeCursor(cursor: string | undefined, shape: CursorShape): Record<string, string> | undefined {
  if (cursor === undefined || cursor === '') return undefined;
  const key = parse(cursor);
  if (!key || typeof key !== 'object' || Array.isArray(key)) throw invalidCursor();
  const names = Object.keys(key);
  const expected = Object.keys(shape);
  if (names.length !== expected.length || !expected.every((n) => Object.hasOwn(key, n))) throw invalidCursor();
  for (const name of expected) {
    const value = (key as Record<string, unknown>)[name];
    const rule = shape[name];
    const fits = typeof value === 'string'
      && (typeof rule === 'string' ? value === rule : value.length > rule.prefix.length && value.startsWith(rule.prefix));
    if (!fits) throw invalidCursor();
  }
  return key as Record<string, string>;
}
