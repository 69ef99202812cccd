/**
 * The bounds of any JSON the service takes from a client, in one place (request bodies, and JSON given inside a string).
 *
 * Deeper than any request of the contract or the Cloud API goes (a flow's data included). Code that walks a value
 * recursively (JSON.stringify among it) overflows the stack at a few thousand levels: a 500 for bad input.
 */
export const MAX_JSON_DEPTH = 64;

/** The smallest size of a number other than 0 that DynamoDB holds (its numbers run from 1e-130 to under 1e126 in size). */
export const MIN_STORABLE_NUMBER = 1e-130;

/** Whether the table can hold the number (DynamoDB's range; 38 significant digits hold any double). */
export const isStorableNumber = (x: number): boolean => x === 0 || (Math.abs(x) >= MIN_STORABLE_NUMBER && Math.abs(x) < 1e126);

/**
 * What makes parsed JSON unfit for any route: nesting past MAX_JSON_DEPTH, a number past 2^53 - 1 in size (it has lost
 * digits in JSON.parse already: 1e309 became Infinity), or one other than 0 smaller than the table holds.
 */
export function outsideJsonBounds(value: unknown): string | undefined {
  const pending: [unknown, number][] = [[value, 1]];
  while (pending.length) {
    const [x, depth] = pending.pop()!;
    if (typeof x === 'number' && !(Math.abs(x) <= Number.MAX_SAFE_INTEGER)) return `Numbers may be at most ${Number.MAX_SAFE_INTEGER} in size`;
    if (typeof x === 'number' && !isStorableNumber(x)) return `Numbers other than 0 may be no smaller than ${MIN_STORABLE_NUMBER} in size`;
    if (typeof x !== 'object' || x === null) continue;
    if (depth > MAX_JSON_DEPTH) return `JSON may be nested at most ${MAX_JSON_DEPTH} levels deep`;
    for (const child of Object.values(x)) pending.push([child, depth + 1]);
  }
  return undefined;
}
