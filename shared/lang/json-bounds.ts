/**
 * The bounds of any JSON the service takes from a client, in one place (request bodies, and JSON given inside a string).
 *
 * Deeper than any request of the contract or the Cloud API goes (a flow's data included). Code that walks a value
 * recursively (JSON.stringify among it) overflows the stack at a few thousand levels: a 500 for bad input.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * What makes parsed JSON unfit for any route: nesting past MAX_JSON_DEPTH, or a number past 2^53 - 1 in size. Such a
 * number has lost digits in JSON.parse already (1e309 became Infinity), the table refuses to store it, and one read
 * back would be a BigInt that no response can serialise.
 */
export function outsideJsonBounds(value: unknown): string | undefined {
  const pending: [unknown, number][] = [[value, 1]];
  while (pending.length) {
    const [x, depth] = pending.pop()!;
    if (typeof x === 'number' && !(Math.abs(x) <= Number.MAX_SAFE_INTEGER)) return `Numbers may be at most ${Number.MAX_SAFE_INTEGER} in size`;
    if (typeof x !== 'object' || x === null) continue;
    if (depth > MAX_JSON_DEPTH) return `JSON may be nested at most ${MAX_JSON_DEPTH} levels deep`;
    for (const child of Object.values(x)) pending.push([child, depth + 1]);
  }
  return undefined;
}
