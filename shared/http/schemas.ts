/** Small valibot pieces every area reuses. */
import * as v from 'valibot';

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A UUID in either letter case, as the service writes its ids: in lower case (so `GET /messages/v1/{ID}` finds it). */
export const uuid = (message = 'must be a UUID') => v.pipe(v.string(message), v.regex(UUID_RE, message), v.toLowerCase());

/** Anything but an array: valibot's object and record schemas take an array as an object (its members unread). */
export const notAnArray = (message: string) => v.custom<unknown>((x) => !Array.isArray(x), message);

/** Path parameters `{ id }` as a UUID. */
export const idParams = v.object({ id: uuid() });

/** `limit` (1-max, default) and an opaque `cursor` in the query string. */
export const pageQuery = (max = 100, fallback = 20) =>
  v.object({
    limit: v.optional(
      v.pipe(v.string(), v.regex(/^\d+$/, 'must be a whole number'), v.transform(Number), v.minValue(1), v.maxValue(max)),
      String(fallback),
    ),
    cursor: v.optional(v.pipe(v.string(), v.maxLength(2048))),
  });
