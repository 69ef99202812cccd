/**
 * Null members of an upstream-style send: Graph takes a member sent as null as one not sent (heyoo sends `caption: null`
 * and `filename: null` for a file without them), so every rule of the service reads the request without them, and the
 * message object goes upstream with them put back where they were: forwarded as sent. No dependencies.
 */

/** A body with its null members left out (array items kept), as every rule reads it. */
export function withoutNulls<T>(value: T): T {
  if (Array.isArray(value)) return value.map(withoutNulls) as T;
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).filter(([, member]) => member !== null).map(([key, member]) => [key, withoutNulls(member)])) as T;
}

/** What each upstream-style request was as sent, nulls included. */
const sentBodies = new WeakMap<object, unknown>();

/** Remembers the body a checked request was read from. */
export const keepSentBody = (request: object, sent: unknown): void => {
  sentBodies.set(request, sent);
};

/**
 * The upstream payload built from `request`, its message object (`text`, `interactive`, `template`...) with the null
 * members the body sent in it put back. The envelope is the service's: a null `context`, `biz_opaque_callback_data` or
 * service field (`ai`, `templateName`...) is none, and does not go upstream.
 */
export function withSentNulls<T extends { type: string }>(request: object, payload: T): T {
  const sent = sentBodies.get(request) as Record<string, unknown> | undefined;
  const own = (payload as Record<string, unknown>)[payload.type];
  if (!sent || !own || typeof own !== 'object') return payload;
  return { ...payload, [payload.type]: withNullsOf(sent[payload.type], own) };
}

/** `checked` with the null members of `sent` put back where they were. */
function withNullsOf(sent: unknown, checked: unknown): unknown {
  if (Array.isArray(sent) && Array.isArray(checked)) return checked.map((item, i) => withNullsOf(sent[i], item));
  if (!sent || typeof sent !== 'object' || !checked || typeof checked !== 'object' || Array.isArray(checked)) return checked;
  const out: Record<string, unknown> = { ...(checked as Record<string, unknown>) };
  for (const [key, member] of Object.entries(sent)) {
    if (member === null && !Object.hasOwn(out, key)) out[key] = null;
    else if (Object.hasOwn(out, key)) out[key] = withNullsOf(member, out[key]);
  }
  return out;
}
