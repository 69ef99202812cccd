/**
 * Limit slots: each item of a capped kind (funnel stages, dynamic segments, broadcasts waiting for their send_at) holds
 * one of `max` slot items, claimed in its create's transaction with a condition that the slot is free and released
 * with its delete, so the cap is exact under concurrent creates without a counter every create would update. A create
 * picks a free slot at random, so concurrent creates rarely pick the same one.
 */

/**
 * The slots of `max` that none of `held` takes and this request has not already lost to a concurrent create (`lost`).
 * Every entry of `held` counts against the cap, one without a slot (an item made before the slots) too: the lowest
 * numbers no item holds are kept for those, one each, so that the items with slots and without stay within `max`
 * under concurrent creates (their number only falls: every new item holds a slot).
 */
export function freeSlots(held: readonly (number | null | undefined)[], max: number, lost: ReadonlySet<number> = new Set()): number[] {
  if (held.length >= max) return [];
  const used = new Set(held);
  const unslotted = held.filter((slot) => slot === null || slot === undefined).length;
  const open = Array.from({ length: max }, (_, i) => i).filter((i) => !used.has(i));
  return open.slice(unslotted).filter((i) => !lost.has(i));
}

/** One of the free slots, at random. */
export const randomSlot = (free: readonly number[]): number => free[Math.floor(Math.random() * free.length)];
