/** When to try a failed delivery again: exponential backoff with jitter, or what the receiver asked for. */
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

/** The receiver's `Retry-After` wins over the backoff (bounded by the cap); otherwise the backoff. */
export function nextDelaySeconds(failedAttempts: number, retryAfter: string | undefined, policy: RetryPolicy = defaultPolicy()): number {
  const asked = parseRetryAfter(retryAfter);
  if (asked !== undefined) return Math.min(policy.capSeconds, asked);
  return backoffSeconds(failedAttempts, policy);
}
