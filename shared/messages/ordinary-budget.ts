/**
 * Sends through the API count against their business's per-minute message budget, which running broadcasts
 * share (shared/broadcasts/budget.ts). The send path takes the unit beside the write that records the message (a
 * retry: that claims it), so it costs no round trip of its own, and takes the recording back when the budget is
 * full (nothing went out); a full budget answers 429 like the per-key limit. The unit is a hot counter of the
 * business: it is never part of a transaction, where concurrent sends would cancel each other.
 */
import { ApiError } from '#shared/http/errors.ts';
import { consumeOrdinarySend } from '#shared/broadcasts/budget.ts';
import { broadcastSettings } from '#shared/broadcasts/settings.ts';

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
