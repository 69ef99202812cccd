/**
 * Reading why a TransactWriteItems was cancelled (the one place that reads `CancellationReasons`), and retrying
 * optimistic read-modify-write units of work. Contacts carry a `version`, funnel stages their `rank` and slots; a
 * lost race shows as a cancelled transaction (a failed version condition or a TransactionConflict) and the unit
 * of work runs again on fresh reads.
 */
import { conflict } from '#shared/http/errors.ts';

export type CancelCode = 'None' | 'ConditionalCheckFailed' | 'TransactionConflict' | string;

/** The per-item cancellation codes, or undefined when `err` is not a cancelled transaction. */
export function cancellationCodes(err: unknown): CancelCode[] | undefined {
  const e = err as { name?: string; CancellationReasons?: { Code?: string }[] };
  if (e?.name !== 'TransactionCanceledException') return undefined;
  return (e.CancellationReasons ?? []).map((r) => r.Code ?? 'None');
}

/** True when `err` is a cancelled TransactWriteItems, whatever the reason (matched by name, as the client's error classes vary). */
export const isTransactionCancelled = (err: unknown): boolean => cancellationCodes(err) !== undefined;

/** True when a cancelled transaction failed one of its conditions: the state was not what the write expected. */
export const cancelledByCondition = (err: unknown): boolean => cancellationCodes(err)?.includes('ConditionalCheckFailed') ?? false;

/** Thrown by a unit of work to ask for another attempt on fresh reads. */
export class RetryableConflict extends Error {
  constructor(message = 'concurrent change') {
    super(message);
    this.name = 'RetryableConflict';
  }
}

const isRetryable = (err: unknown): boolean => {
  if (err instanceof RetryableConflict) return true;
  const codes = cancellationCodes(err);
  if (codes) return codes.every((c) => c === 'None' || c === 'TransactionConflict' || c === 'ConditionalCheckFailed');
  const name = (err as { name?: string })?.name;
  return name === 'TransactionConflictException';
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How long a unit of work keeps retrying lost races before the client is told to retry (well inside a 10 s Lambda). */
const RETRY_BUDGET_MS = 5_000;

/**
 * Runs `work` until it commits. `work` must turn every cancellation that is NOT a lost race into a domain error
 * (or a RetryableConflict when it is one); anything still retryable here is retried with jittered backoff.
 * Past the budget (heavy contention on one item) the answer is 409 `conflict`, never a time-out.
 */
export async function optimistic<T>(work: () => Promise<T>, budgetMs = RETRY_BUDGET_MS): Promise<T> {
  const deadline = Date.now() + budgetMs;
  // Endpoints get twice the budget (10 s): an attempt as long as the last one must still end before most of that.
  const mustEndBy = deadline + budgetMs * 0.8;
  for (let attempt = 1; ; attempt++) {
    const started = Date.now();
    try {
      return await work();
    } catch (err) {
      if (!isRetryable(err)) throw err;
      // On a starved machine one attempt can take seconds: one started just before the budget ran out would
      // outlive the function's time-out (a 503) instead of answering 409.
      const now = Date.now();
      if (now >= deadline || now + (now - started) >= mustEndBy) throw conflict('conflict', 'The resource was changed by concurrent requests; retry the request');
      await sleep(Math.random() * Math.min(100, 5 * 2 ** Math.min(attempt, 5)));
    }
  }
}
