/** The counters' clock (epoch ms): a seam so tests can let days pass without waiting for them. */
export const clock = { now: (): number => Date.now() };
