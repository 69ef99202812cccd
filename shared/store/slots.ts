/**
 * Limit slots: each item of a capped kind (funnel stages, segments and dynamic segments, broadcasts waiting for their
 * send_at) holds one of `max` slot items, claimed in its create's transaction with a condition that the slot is free
 * and released with its delete, so the cap is exact under concurrent creates without a counter every create would
 * update. A create picks a free slot at random, so concurrent creates rarely pick the same one (`claimSlots`).
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

/** One kind of slot a new item claims: the cap, and the slots the items of the latest read hold. */
export interface SlotKind<R> {
  max: number;
  held: (read: R) => readonly (number | null | undefined)[];
}

/**
 * Claims one free slot of each kind for a new item and stores it. Each try reads the current items (`read`, which
 * throws the domain's limit error when a kind is full), picks a free slot of each kind at random, and `store`s the
 * item with them (one slot per kind, in the order of `kinds`), answering what it stored, or undefined when a
 * concurrent create took one of the slots first (its transaction's slot condition failed). The next try skips the
 * slots lost so far, and when concurrent creates hold every free one it skips none (they have landed by the read
 * after). After `tries` lost races, `exhausted()` is thrown.
 */
export async function claimSlots<R, T>(claim: {
  kinds: readonly SlotKind<R>[];
  read: () => Promise<R>;
  store: (read: R, slots: number[]) => Promise<T | undefined>;
  tries: number;
  exhausted: () => Error;
}): Promise<T> {
  const lost = claim.kinds.map(() => new Set<number>());
  for (let attempt = 0; attempt < claim.tries; attempt++) {
    const read = await claim.read();
    const free = claim.kinds.map((kind, i) => freeSlots(kind.held(read), kind.max, lost[i]));
    if (free.some((slots) => slots.length === 0)) {
      lost.forEach((slots) => slots.clear());
      continue;
    }
    const slots = free.map((open) => open[Math.floor(Math.random() * open.length)]);
    const stored = await claim.store(read, slots);
    if (stored !== undefined) return stored;
    slots.forEach((slot, i) => lost[i].add(slot));
  }
  throw claim.exhausted();
}
