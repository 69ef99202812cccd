/** The rules of the webhook subscription endpoints. */
import { randomUUID } from 'node:crypto';
import { badRequest, conflict, forbidden, notFound } from '#shared/http/errors.ts';
import { decodeCursor, encodeCursor } from '#shared/http/cursor.ts';
import { keys } from '#shared/store/keys.ts';
import { enqueue } from '#shared/queue/queue.ts';
import { newEvent } from '#shared/events/outbox.ts';
import { TEST_EVENT, takesDelivery, type Subscription } from './model.ts';
import type { CreateInput, UpdateInput } from './schemas.ts';
import { createDelivery, getDelivery, listDeliveries, recordOutcome, reopenDelivery } from './delivery-store.ts';
import {
  deleteSubscription, getSubscription, listSubscriptions, putSubscription, type Refusal, retargetSubscription, subscriptionOwner, targetHolder,
  updateSubscription,
} from './subscription-store.ts';
import { targetFingerprint } from './target.ts';
import { newSecret } from './signing.ts';
import { deliveryJob, newDelivery } from './fanout.ts';
import { send } from './delivery.ts';
import { deliveryView, subscriptionView } from './views.ts';
import { outlastCachedCopies } from './current-subscriptions.ts';

/** 404 for an unknown id, 403 for another account's (as the contract's authentication section says). */
async function mustGet(bid: string, id: string): Promise<Subscription> {
  const s = await getSubscription(bid, id);
  if (s) return s;
  const owner = await subscriptionOwner(id);
  if (owner && owner !== bid) throw forbidden('The webhook subscription belongs to another account');
  throw notFound('Webhook subscription not found');
}

/**
 * Subscriptions a business may have. Each event becomes one signed POST per subscription, with up to 9
 * attempts over 3 days, so without a bound one tenant could turn each event into thousands of requests
 * at a third party. 16, as Stripe allows per account: enough for every system a business connects.
 */
export const MAX_SUBSCRIPTIONS_PER_BUSINESS = 16;

/** Attempts of a guarded write against concurrent changes of the same subscription (each re-reads it). */
const WRITE_TRIES = 5;

/** 400 past the cap; 409 with the id of the subscription that already has this URL and these events. */
async function refuse(bid: string, why: Exclude<Refusal, 'changed'>, target: string): Promise<never> {
  if (why === 'limit_reached') {
    throw badRequest('limit_reached', `A business may have at most ${MAX_SUBSCRIPTIONS_PER_BUSINESS} webhook subscriptions; delete one first`);
  }
  throw conflict('duplicate_webhook', 'A webhook subscription with this URL and these events exists already', { existing_webhook_id: await targetHolder(bid, target) ?? null });
}

/** The subscription was written by someone else between each read and write (the delivery worker marks failures on it). */
const changing = () => conflict('concurrent_update', 'The webhook subscription kept changing while it was updated; try again');

export async function createSubscription(bid: string, input: CreateInput) {
  const now = new Date().toISOString();
  const s: Subscription = {
    id: randomUUID(),
    businessId: bid,
    name: input.name,
    url: input.url,
    events: input.events,
    secret: newSecret(),
    enabled: input.enabled ?? true,
    disabledReason: input.enabled === false ? 'manual' : null,
    disabledAt: input.enabled === false ? now : null,
    failingSince: null,
    createdAt: now,
    updatedAt: now,
    version: 1,
  };
  const target = targetFingerprint(s.url, s.events);
  const refused = await putSubscription(s, target, MAX_SUBSCRIPTIONS_PER_BUSINESS);
  if (refused === 'limit_reached' || refused === 'duplicate_target') await refuse(bid, refused, target);
  return { id: s.id, name: s.name, url: s.url, events: s.events, secret: s.secret, createdAt: s.createdAt };
}

export async function listSubscriptionViews(bid: string) {
  return (await listSubscriptions(bid)).map(subscriptionView);
}

export async function getSubscriptionView(bid: string, id: string) {
  return subscriptionView(await mustGet(bid, id));
}

export async function updateSubscriptionFields(bid: string, id: string, input: UpdateInput) {
  for (let tries = 1; ; tries++) {
    const current = await mustGet(bid, id);
    const now = new Date().toISOString();
    const fields: Partial<Subscription> = { name: input.name, url: input.url, events: input.events, updatedAt: now };
    if (input.enabled === true && !current.enabled) Object.assign(fields, { enabled: true, disabledReason: null, disabledAt: null, failingSince: null });
    if (input.enabled === false && current.enabled) Object.assign(fields, { enabled: false, disabledReason: 'manual', disabledAt: now });
    const from = targetFingerprint(current.url, current.events);
    const to = targetFingerprint(input.url ?? current.url, input.events ?? current.events);
    if (from !== to) {
      const refused = await retargetSubscription(current, fields, from, to);
      if (refused === 'changed') {
        if (tries < WRITE_TRIES) continue;
        throw changing();
      }
      if (refused) await refuse(bid, refused, to);
    } else if (!(await updateSubscription(bid, id, fields))) throw notFound('Webhook subscription not found');
    // Deliveries stop going to the old URL, or at all, before the customer is told so.
    if ((input.url !== undefined && input.url !== current.url) || fields.enabled === false) await outlastCachedCopies();
    return subscriptionView((await getSubscription(bid, id)) ?? { ...current, ...fields });
  }
}

export async function removeSubscription(bid: string, id: string) {
  for (let tries = 1; ; tries++) {
    const current = await mustGet(bid, id);
    const refused = await deleteSubscription(current, targetFingerprint(current.url, current.events));
    if (refused && tries < WRITE_TRIES) continue;
    if (refused) throw changing();
    await outlastCachedCopies();
    return { success: true, id };
  }
}

/** A new secret, effective at once: no attempt that starts after the answer is signed with the old one. */
export async function regenerateSecret(bid: string, id: string) {
  const current = await mustGet(bid, id);
  const secret = newSecret();
  // Of regenerations at once, only one answers with a secret, the one that signs: a write replaces only the secret
  // its request read, and an answer is given only if its secret is still in use once cached copies have expired.
  const updated = await updateSubscription(bid, id, { secret, updatedAt: new Date().toISOString() }, { replacing: current.secret });
  if (!updated) {
    await mustGet(bid, id);
    throw regeneratedMeanwhile();
  }
  await outlastCachedCopies();
  if ((await mustGet(bid, id)).secret !== secret) throw regeneratedMeanwhile();
  return { ...subscriptionView(updated), secret };
}

const regeneratedMeanwhile = () =>
  conflict('secret_regenerated', 'Another request regenerated the secret at the same time; its answer holds the secret in use. Regenerate again to get one here');

/**
 * Sends a signed `webhook.test` delivery now and answers with its outcome. It is recorded among the
 * subscription's deliveries, sent even to a disabled subscription, and never retried.
 */
export async function sendTest(bid: string, id: string) {
  const s = await mustGet(bid, id);
  const event = newEvent(bid, TEST_EVENT as never, {
    webhook_id: s.id,
    message: 'This is a test delivery from your webhook subscription.',
    sent_at: new Date().toISOString(),
  });
  const d = newDelivery(event, s, null);
  await createDelivery(d);
  const result = await send(d, s, 1);
  await recordOutcome(d, result.ok
    ? { status: 'delivered', attempt: result.attempt }
    : { status: 'failed', attempt: result.attempt, failureReason: 'test_failed' });
  return {
    deliveryId: d.id,
    event: TEST_EVENT,
    success: result.ok,
    statusCode: result.attempt.statusCode,
    durationMs: result.attempt.durationMs,
    error: result.attempt.error,
  };
}

export async function listDeliveryViews(bid: string, id: string, limit: number, cursor: string | undefined) {
  await mustGet(bid, id);
  const start = decodeCursor(cursor, { pk: keys.deliveriesPk(bid, id), sk: { prefix: keys.deliverySkPrefix } });
  const page = await listDeliveries(bid, id, limit, start);
  return { data: page.items.map(deliveryView), next_cursor: encodeCursor(page.last) };
}

/** Sends a delivered or failed delivery again (same id, a fresh series of attempts). */
export async function redeliver(bid: string, id: string, deliveryId: string) {
  const s = await mustGet(bid, id);
  const d = await getDelivery(bid, id, deliveryId);
  if (!d) throw notFound('Delivery not found');
  if (!s.enabled) throw conflict('webhook_disabled', 'The webhook subscription is disabled; enable it first');
  if (!takesDelivery(s, d.event)) throw conflict('event_unsubscribed', `The webhook subscription no longer subscribes to ${d.event}; add it to its events first`);
  const reopened = await reopenDelivery(d);
  if (!reopened) throw conflict('delivery_pending', 'The delivery is still pending; it will be attempted again automatically');
  await enqueue('webhook-deliveries', deliveryJob(reopened));
  return deliveryView(reopened);
}

