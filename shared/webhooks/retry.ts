/** When to try a failed delivery again: exponential backoff with jitter, or later when the receiver asks for it. */
import { webhookSettings } from './settings.ts';

export interface RetryPolicy {
  baseSeconds: number;
  factor: number;
  capSeconds: number;
  maxAttempts: number;
}

export const defaultPolicy = (): RetryPolicy => ({
  baseSeconds: webhookSettings.retryBaseSeconds,
  factor: webhookSettings.retryFactor,
  capSeconds: webhookSettings.retryCapSeconds,
  maxAttempts: webhookSettings.maxAttempts,
});

/**
 * Delay in seconds before attempt `failedAttempts + 1`: base × factor^(n-1), capped, with ±20 % jitter
 * so that many deliveries failing together (a receiver outage) do not come back together.
 */
export function backoffSeconds(failedAttempts: number, policy: RetryPolicy = defaultPolicy(), random: () => number = Math.random): number {
  const raw = Math.min(policy.capSeconds, policy.baseSeconds * policy.factor ** Math.max(0, failedAttempts - 1));
  return Math.min(policy.capSeconds, raw * (0.8 + 0.4 * random()));
}

/** `Retry-After` as seconds (delta or HTTP date); undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: number = Date.now()): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed);
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, (at - now) / 1000);
}

/**
 * The scheduled backoff, lengthened (never shortened) by the receiver's `Retry-After`, up to the cap.
 * A receiver may ask for more time; it may not collapse the schedule (`Retry-After: 0` would burn every
 * attempt in seconds), as Standard Webhooks advises.
 */
export function nextDelaySeconds(failedAttempts: number, retryAfter: string | undefined, policy: RetryPolicy = defaultPolicy()): number {
  const scheduled = backoffSeconds(failedAttempts, policy);
  const asked = parseRetryAfter(retryAfter);
  return Math.min(policy.capSeconds, Math.max(scheduled, asked ?? 0));
}
