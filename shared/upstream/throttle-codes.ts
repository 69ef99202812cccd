/**
 * Graph's throttling codes: the app's calls (4, 613), the account's (80007), the number's throughput (130429) and a
 * pair of users (131056). The client retries them as transient; a send still throttled after its retries is reported
 * as throttled (429 `upstream_throttled`, with `Retry-After`).
 */
export const THROTTLE_CODES: ReadonlySet<number> = new Set([130429, 131056, 80007, 4, 613]);
