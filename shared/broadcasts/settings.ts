/**
 * Broadcast pacing and timing, read from the environment once (like shared/config.ts, which holds the
 * business's messages-per-minute limit that broadcasts share with ordinary sends).
 */
import { config } from '#shared/config.ts';
import { numberEnv } from '#shared/settings/env.ts';

/** Every tunable here is a rate, a count or a duration: never negative (`min: 0`). */
const NON_NEGATIVE = { min: 0 };

const limit = config.limits.messages;
/** WhatsApp Cloud API default throughput per phone number is 80 messages per second. */
const upstreamPerSecond = numberEnv('BROADCAST_UPSTREAM_MPS', 80, NON_NEGATIVE);
/**
 * The pace a broadcast aims at. By default 90% of the business limit: the other 10% of every minute stays
 * free for ordinary sends (agents answering while a campaign runs).
 */
const requestedPace = numberEnv('BROADCAST_PACE_PER_MINUTE', Math.floor(limit * 0.9), NON_NEGATIVE);

export const broadcastSettings = {
  /** The business's messages-per-minute limit (shared budget). */
  limitPerMinute: limit,
  /** Messages per minute a broadcast sends at: never above the limit nor the upstream throughput. */
  pacePerMinute: Math.max(1, Math.min(requestedPace, limit, upstreamPerSecond * 60)),
  /** How long one worker invocation keeps pacing (one step per second) before handing over to the next message. */
  loopMs: numberEnv('BROADCAST_LOOP_MS', 10_000, NON_NEGATIVE),
  /** Sends in flight at once per worker run (pace × upstream latency must fit, or the pace is not reached). */
  sendConcurrency: Math.max(1, numberEnv('BROADCAST_SEND_CONCURRENCY', 64, NON_NEGATIVE)),
  /** A recipient claimed by a worker that died is resolved after this (above the worker's time-out). */
  leaseMs: numberEnv('BROADCAST_LEASE_MS', 120_000, NON_NEGATIVE),
  /** Explicit audiences: at most this many contact ids. */
  maxContactIds: 10_000,
  /** `send_at` at most this far ahead. */
  maxScheduleDays: 30,
  /**
   * Broadcasts of one business created with a `send_at` and not finished: each far-off one is a schedule in the
   * operator's EventBridge Scheduler quota (a million per account and region), which every business shares, and each
   * running one writes a recipient item per contact of its audience.
   */
  maxScheduled: 100,
  /** Broadcasts of one business started at their create and not finished: what one business (or a leaked key) can make run at once. */
  maxRunning: 100,
} as const;
