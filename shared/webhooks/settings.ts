/**
 * Webhook delivery tunables, read once per container. Deployed defaults give 9 attempts spread over
 * about 3 days (1 min, 4 min, 16 min, ~1 h, ~4 h, ~17 h, then 24 h apart, each ±20 % jitter); tests and
 * the local stack shorten them through the environment.
 */
const env = process.env;

const num = (name: string, fallback: number): number => {
  const raw = env[name];
  const n = raw === undefined || raw === '' ? NaN : Number(raw);
  return Number.isFinite(n) && n >= 0 ? n : fallback;
};

export const webhookSettings = {
  /** First retry delay; each next one is `factor` times longer, up to `retryCapSeconds`. */
  retryBaseSeconds: num('WEBHOOK_RETRY_BASE_SECONDS', 60),
  retryFactor: num('WEBHOOK_RETRY_FACTOR', 4),
  retryCapSeconds: num('WEBHOOK_RETRY_CAP_SECONDS', 86_400),
  /** Attempts per delivery, the first included. */
  maxAttempts: Math.max(1, Math.floor(num('WEBHOOK_MAX_ATTEMPTS', 9))),
  /** A receiver that has not answered with a 2xx within this many ms counts as failed. */
  timeoutMs: num('WEBHOOK_TIMEOUT_MS', 10_000),
  /** A subscription whose deliveries keep failing this long (and exhaust their attempts) is disabled. */
  disableAfterSeconds: num('WEBHOOK_DISABLE_AFTER_SECONDS', 3 * 86_400),
  /** How long a delivery waiting behind an earlier one of its ordering lane sleeps before looking again. */
  laneWaitSeconds: num('WEBHOOK_LANE_WAIT_SECONDS', 2),
  /** Outbox items older than this are re-published by the sweep (the original publish was lost). */
  sweepAfterSeconds: num('OUTBOX_SWEEP_AFTER_SECONDS', 60),
} as const;
