/**
 * Sends through the API count against their business's per-minute message budget, which running broadcasts
 * share (shared/broadcasts/budget.ts). The send path takes the unit in the transaction that records the message
 * (a retry: that claims it), so it is spent exactly when a message goes on its way and costs no round trip of
 * its own; a full budget answers 429 like the per-key limit.
 */
import { ApiError } from '#shared/http/errors.ts';
import { consumeOrdinarySend, ordinarySendItem } from '#shared/broadcasts/budget.ts';
import { broadcastSettings } from '#shared/broadcasts/settings.ts';

export { ordinarySendItem as budgetItem };

export function budgetRefused(nowMs = Date.now()): ApiError {
  const retryAfter = Math.max(1, 60 - Math.floor(nowMs / 1000) % 60);
  return new ApiError(
    429,
    { error: 'rate_limited', message: `The business's limit of ${broadcastSettings.limitPerMinute} messages per minute (shared with broadcasts) is used up`, retry_after: retryAfter },
    { 'X-RateLimit-Remaining': '0', 'Retry-After': String(retryAfter) },
  );
}

/** The unit taken on its own, where no recording transaction is at hand yet (the full look-up of a new number). */
export async function takeBudget(businessId: string): Promise<void> {
  if (!(await consumeOrdinarySend(businessId))) throw budgetRefused();
}
