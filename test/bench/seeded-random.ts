/**
 * A seeded pseudo-random generator for the benches' generated data (mulberry32: 32-bit state, period 2^32), so
 * every run loads the same contacts. It replaces `rnd * 1103515245 + 12345` in doubles, whose products passed 2^53,
 * lost their low bits and fell into a cycle: 14,469 distinct values in a million draws, so a "million contacts" were
 * a few thousand repeated ones.
 */
export function seededRandom(seed: number): () => number {
  let state = seed | 0;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
