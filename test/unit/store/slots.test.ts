import { claimSlots, freeSlots } from '#shared/store/slots.ts';

describe('freeSlots', () => {
  it('offers every slot no item holds, none that this request lost, and none at the cap', () => {
    expect(freeSlots([], 4)).toEqual([0, 1, 2, 3]);
    expect(freeSlots([2, 0], 4, new Set([3]))).toEqual([1]);
    expect(freeSlots([0, 1, 2, 3], 4)).toEqual([]);
  });

  it('keeps the lowest open slots for items made before slots, one each, so that all of them together stay within the cap', () => {
    // Two items without a slot and one with slot 0 (claimed before this rule): slots 1 and 2 are theirs, only 3 is left.
    expect(freeSlots([null, 0, undefined], 4)).toEqual([3]);
    // Whatever order concurrent creates read the items in, the cap holds: each new slot is one of max - held.length.
    for (const held of [[null, null], [null, 3], [1, null], [null, 0, null]]) {
      expect(freeSlots(held, 5)).toHaveLength(5 - held.length);
    }
  });
});

describe('claimSlots', () => {
  const kinds = [{ max: 3, held: (held: number[]) => held }];

  it('skips the slots it lost to concurrent creates, and reads afresh once they hold every free one', async () => {
    const reads: number[][] = [[], [], [0, 1, 2].slice(0, 2)];
    const tried: number[][] = [];
    const slot = await claimSlots({
      kinds,
      read: async () => reads.shift() ?? [0, 1],
      // The first two picks are lost; the third read shows the two creates that took them, and the pick lands.
      store: async (_, slots) => (tried.push(slots), tried.length <= 2 ? undefined : slots[0]),
      tries: 8,
      exhausted: () => new Error('exhausted'),
    });
    expect(tried[1][0]).not.toBe(tried[0][0]);
    expect(slot).toBe(2);
  });

  it('gives up with the caller error after its tries, and lets the read answer the cap', async () => {
    const picked: number[] = [];
    const store = async (_: number[], [slot]: number[]) => (picked.push(slot), undefined);
    await expect(claimSlots({ kinds, read: async () => [], store, tries: 5, exhausted: () => new Error('exhausted') })).rejects.toThrow('exhausted');
    // Every free slot lost once (three tries), a try that finds none left and skips none after it, and one more pick.
    expect(picked.slice(0, 3).sort()).toEqual([0, 1, 2]);
    expect(picked).toHaveLength(4);
    const full = () => Promise.reject(new Error('limit reached'));
    await expect(claimSlots({ kinds, read: full, store, tries: 4, exhausted: () => new Error('exhausted') })).rejects.toThrow('limit reached');
  });
});
