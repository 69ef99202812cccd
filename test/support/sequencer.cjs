/**
 * The order of a run without jest's timing cache (a fresh clone, CI): the longest files first, so that both workers
 * finish together. By file size, jest's fallback, the deployed test (small file, 60-110 s) started late and ran
 * alone at the end: a fresh clone took 450 s for about 390 s of work per worker. With a cache (timings of the last
 * run on this machine) jest's own order, longest by the last run, applies unchanged.
 */
const Sequencer = require('@jest/test-sequencer').default;

/**
 * The files that take longest in a full run, longest first (2 cores, 2026-11-29), and then the infra test: it synthesizes
 * the stack as the deployed test does and takes the function packages that test built (infra/bundle.ts, BUNDLE_CACHE_DIR),
 * so it comes once the build is done, not beside it, where it would wait for it.
 */
const LONGEST = [
  'test/e2e/deployed/deployed.test.ts',
  'test/integration/webhooks/delivery.test.ts',
  'test/integration/security/bad-input.test.ts',
  'test/e2e/broadcasts/broadcasts.test.ts',
  'test/integration/segments/members.test.ts',
  'test/infra/stack.test.ts',
];

class LongestFirst extends Sequencer {
  sort(tests) {
    const sorted = super.sort(tests);
    if (sorted.some((t) => t.duration != null)) return sorted;
    const rank = (t) => {
      const i = LONGEST.findIndex((path) => t.path.endsWith(path));
      return i < 0 ? LONGEST.length : i;
    };
    // Array sort is stable: the rest keeps jest's order (largest file first).
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}

module.exports = LongestFirst;
