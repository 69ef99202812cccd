/**
 * Webhook delivery tunables, read once per container. Deployed defaults give 9 attempts spread over
 * about 3 days (1 min, 4 min, 16 min, ~1 h, ~4 h, ~17 h, then 24 h apart, each ±20 % jitter); tests and
 * the local stack shorten them through the environment.
 */
import { numberEnv } from '#shared/settings/env.ts';

/** Every tunable here is a count or a duration: never negative (`min: 0`). */
const NON_NEGATIVE = { min: 0 };

export const webhookSettings = {
  /** First retry delay; each next one is `factor` times longer, up to `retryCapSeconds`. */
  retryBaseSeconds: numberEnv('WEBHOOK_RETRY_BASE_SECONDS', 60, NON_NEGATIVE),
  retryFactor: numberEnv('WEBHOOK_RETRY_FACTOR', 4, NON_NEGATIVE),
  retryCapSeconds: numberEnv('WEBHOOK_RETRY_CAP_SECONDS', 86_400, NON_NEGATIVE),
  /** Attempts per delivery, the first included. */
  maxAttempts: Math.max(1, Math.floor(numberEnv('WEBHOOK_MAX_ATTEMPTS', 9, NON_NEGATIVE))),
  /** A receiver that has not answered with a 2xx within this many ms counts as failed. */
  timeoutMs: numberEnv('WEBHOOK_TIMEOUT_MS', 10_000, NON_NEGATIVE),
  /** A subscription whose deliveries keep failing this long is disabled (so is one that fails a delivery's every attempt). */
  disableAfterSeconds: numberEnv('WEBHOOK_DISABLE_AFTER_SECONDS', 3 * 86_400, NON_NEGATIVE),
  /** How long a delivery waiting behind an earlier one of its ordering lane sleeps before looking again. */
  laneWaitSeconds: numberEnv('WEBHOOK_LANE_WAIT_SECONDS', 2, NON_NEGATIVE),
  /** Outbox items older than this are re-published by the sweep (the original publish was lost). */
  sweepAfterSeconds: numberEnv('OUTBOX_SWEEP_AFTER_SECONDS', 60, NON_NEGATIVE),
} as const;
