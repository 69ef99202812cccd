/**
 * Cursors of the conversation and message lists. A cursor is the DynamoDB key where the previous page
 * stopped; one whose partition keys are not the caller's list (forged, or another business's) is a 400.
 */
import { decodeCursor } from '#shared/http/schemas.ts';
import { validationError } from '#shared/http/errors.ts';

export function ownCursor(cursor: string | undefined, expected: { pk: string; gsi1pk: string }): Record<string, unknown> | undefined {
  if (!cursor) return undefined;
  const key = decodeCursor(cursor);
  const valid = key
    && key.pk === expected.pk
    && key.gsi1pk === expected.gsi1pk
    && typeof key.sk === 'string'
    && typeof key.gsi1sk === 'string'
    && Object.keys(key).length === 4;
  if (!valid) throw validationError({ cursor: ['is not a cursor of this list'] }, 'Invalid cursor');
  return key;
}
