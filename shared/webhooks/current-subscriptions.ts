/**
 * The subscription an attempt is sent with: never a copy carried in a queue message (no URL or secret
 * in SQS bodies, which stay up to 14 days in a dead-letter queue), always one read from the table at
 * most `SUBSCRIPTION_FRESH_MS` before the attempt starts.
 *
 * - The delivery worker reads the subscriptions of a whole batch in one BatchGetItem (strongly
 *   consistent) and keeps them in this container for `SUBSCRIPTION_FRESH_MS`, so that a busy worker
 *   reads each subscription a few times a second, not once per delivery, and a send never waits for a
 *   read that a batch a moment ago already made. A copy past half its life is read again in the
 *   background, so that a steady stream of batches does not wait for reads at all.
 * - Every write to a subscription raises its `version`, and the fan-out puts the version it saw in the
 *   job: a copy older than that is read again, so an event fanned out after a change is never sent as
 *   the subscription was before it.
 * - The management endpoints that stop deliveries to a target (new URL, new secret, disabled, deleted)
 *   answer only once `SUBSCRIPTION_FRESH_MS` have passed since their write (`outlastCachedCopies`). A
 *   copy read before the write is then too old to be used by any attempt that starts after the answer:
 *   from the moment the customer is told, no attempt goes to the old URL, with the old secret, or to a
 *   subscription that is disabled or gone (the contract: the old secret stops verifying immediately),
 *   as long as the table answers a read within that time (a slower read is used all the same: there is
 *   nothing fresher to be had; DynamoDB answers in milliseconds).
 *   Only durations on each machine's own clock are compared, so clock skew between them does not matter.
 */
import type { Subscription } from './model.ts';
import { getSubscription, getSubscriptions } from './subscription-store.ts';

/**
 * How long a read subscription may be used. Short, because each management call that stops deliveries
 * waits this long before it answers (a rare call: a second is acceptable there); long enough that a
 * worker under load reads each subscription about twice a second, in the background, even when the
 * table takes a few hundred milliseconds to answer (a busy machine, a throttled table): with 250 ms,
 * such reads came back already too old to use and every batch waited for one.
 */
export const SUBSCRIPTION_FRESH_MS = 1000;

export interface SubscriptionRef {
  businessId: string;
  webhookId: string;
  /** The version the fan-out saw: a copy older than that is not used. */
  subscriptionVersion?: number;
}

interface Copy {
  /** Undefined: the subscription did not exist when read (deleted; ids are never reused). */
  subscription: Subscription | undefined;
  /** When the read was sent (not answered): the copy is at least this old. */
  readAt: number;
}

const copies = new Map<string, Copy>();
/** Subscriptions being read in the background (one read at a time each). */
const refreshing = new Set<string>();
const refKey = (r: Pick<SubscriptionRef, 'businessId' | 'webhookId'>) => `${r.businessId}/${r.webhookId}`;

/** Keeps a copy unless a newer one (a read sent later) is held already: reads may answer out of order. */
function keep(key: string, copy: Copy): void {
  const held = copies.get(key);
  if (!held || held.readAt <= copy.readAt) copies.set(key, copy);
}

/** Reads subscriptions in one batched request and keeps the copies. */
async function read(refs: SubscriptionRef[]): Promise<void> {
  const readAt = Date.now();
  const found = await getSubscriptions(refs);
  for (const r of refs) keep(refKey(r), { subscription: found.get(refKey(r)), readAt });
}

function usable(copy: Copy | undefined, ref: SubscriptionRef, now: number): copy is Copy {
  if (!copy || now - copy.readAt >= SUBSCRIPTION_FRESH_MS) return false;
  return !copy.subscription || (copy.subscription.version ?? 0) >= (ref.subscriptionVersion ?? 0);
}

function forgetStale(now: number): void {
  for (const [key, copy] of copies) if (now - copy.readAt >= SUBSCRIPTION_FRESH_MS) copies.delete(key);
}

/**
 * Makes sure this container holds a usable copy of each subscription of a batch: one batched read for
 * those it lacks (awaited), one in the background for those past half their life.
 */
export async function prefetchSubscriptions(refs: SubscriptionRef[]): Promise<void> {
  const now = Date.now();
  forgetStale(now);
  const unique = [...new Map(refs.map((r) => [refKey(r), r])).values()];
  const missing = unique.filter((r) => !usable(copies.get(refKey(r)), r, now));
  const ageing = unique.filter((r) => !missing.includes(r) && !refreshing.has(refKey(r)) && now - copies.get(refKey(r))!.readAt >= SUBSCRIPTION_FRESH_MS / 2);
  if (ageing.length > 0) {
    for (const r of ageing) refreshing.add(refKey(r));
    // A failed refresh costs nothing: a later batch reads what it lacks itself.
    void read(ageing).catch(() => undefined).finally(() => ageing.forEach((r) => refreshing.delete(refKey(r))));
  }
  if (missing.length > 0) await read(missing);
}

/** Single reads in flight, shared by the attempts that need the same subscription at the same moment. */
const reading = new Map<string, Promise<Copy>>();

/**
 * The subscription to send an attempt with, as it is now (undefined: deleted). Read again when the copy
 * is too old (the attempts of a batch that need it share that read); a read that itself took longer than
 * the copy's life is still used: there is nothing fresher to be had.
 */
export async function currentSubscription(ref: SubscriptionRef): Promise<Subscription | undefined> {
  const key = refKey(ref);
  const copy = copies.get(key);
  if (usable(copy, ref, Date.now())) return copy.subscription;
  let pending = reading.get(key);
  if (!pending) {
    const readAt = Date.now();
    pending = getSubscription(ref.businessId, ref.webhookId).then((subscription) => {
      const fresh = { subscription, readAt };
      keep(key, fresh);
      return fresh;
    }).finally(() => reading.delete(key));
    reading.set(key, pending);
  }
  const read = await pending;
  // A shared read sent before the change the job's version names is not enough: read once more.
  if (read.subscription && (read.subscription.version ?? 0) < (ref.subscriptionVersion ?? 0)) {
    const readAt = Date.now();
    const again = await getSubscription(ref.businessId, ref.webhookId);
    keep(key, { subscription: again, readAt });
    return again;
  }
  return read.subscription;
}

/** Waits until every copy read before a change that just committed is too old to be used. */
export const outlastCachedCopies = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, SUBSCRIPTION_FRESH_MS));
