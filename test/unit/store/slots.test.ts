import { freeSlots } from '#shared/store/slots.ts';

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
