/**
 * A template component's kind as a request names it: Meta takes `body` or `BODY` (pywa sends upper case), and the
 * request is forwarded as sent, so every rule that looks for a kind compares without case.
 */
export const isComponent = (c: { type?: unknown } | null | undefined, kind: 'header' | 'body' | 'button' | 'carousel'): boolean =>
  typeof c?.type === 'string' && c.type.toLowerCase() === kind;
