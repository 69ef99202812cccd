/**
 * When the current invocation must have answered: Lambda stops a function at its time-out, and middy answers 503
 * just before. Set by the HTTP pipeline for the request it runs (AsyncLocalStorage follows the request's awaits,
 * also when the local runtime runs several requests in one process); code that waits on something else (the media
 * worker) stops waiting early enough to answer in time. Undefined outside a request.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

const ends = new AsyncLocalStorage<number>();

/** Runs `work` as part of an invocation that ends `remainingMs` from now. */
export const withInvocationEnd = <T>(remainingMs: number, work: () => T): T => ends.run(Date.now() + remainingMs, work);

/** The time (ms since the epoch) the current invocation ends, if it runs under withInvocationEnd. */
export const invocationEnd = (): number | undefined => ends.getStore();

/**
 * What a request keeps of its time for answering after waiting on something else (the media worker, the upstream):
 * the writes that record the outcome and the answer itself, before middy's early time-out.
 */
export const ANSWER_RESERVE_MS = 2_000;
