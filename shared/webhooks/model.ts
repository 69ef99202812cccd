/** The records of the webhook area as they live in the table. */

export interface Subscription {
  id: string;
  businessId: string;
  name: string;
  url: string;
  /** Event names, or `*` for every event. */
  events: string[];
  secret: string;
  enabled: boolean;
  /** `gone` (the receiver answered 410), `failing` (deliveries failed for days) or `manual`. */
  disabledReason: 'gone' | 'failing' | 'manual' | null;
  disabledAt: string | null;
  /** Start of the current run of failed attempts; cleared by the next 2xx. */
  failingSince: string | null;
  createdAt: string;
  updatedAt: string;
  /**
   * Raised by every write to the subscription. Delivery jobs carry the version the fan-out saw (never
   * the URL or secret), and a worker's cached copy older than that is read again.
   */
  version: number;
}

/** Whether the subscription, as it is now, takes an event of this name (a delivery is sent only while it does). */
export const subscribes = (s: Pick<Subscription, 'enabled' | 'events'>, event: string): boolean => s.enabled && (s.events.includes('*') || s.events.includes(event));

export interface Attempt {
  attempt: number;
  at: string;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface Delivery {
  id: string;
  businessId: string;
  webhookId: string;
  eventId: string;
  event: string;
  data: Record<string, unknown>;
  eventCreatedAt: string;
  /** Set when the event has an ordering key: the lane this delivery waits in. */
  laneKey: string | null;
  laneSk: string | null;
  status: DeliveryStatus;
  attemptCount: number;
  /** attemptCount when the current series of attempts began (0, or the count at a manual redelivery). */
  runStart?: number;
  attempts: Attempt[];
  nextAttemptAt: string;
  createdAt: string;
  updatedAt: string;
  deliveredAt: string | null;
  failedAt: string | null;
  /** Why the delivery was given up, when it was. */
  failureReason: string | null;
  /** While set and in the future, one worker is sending this delivery. */
  leaseUntil?: number;
  /** The delivery waiting behind this one in its lane, to be woken when this one is done. */
  nextInLane?: string | null;
}

/** The message on the `webhook-deliveries` queue. */
export interface DeliveryJob {
  businessId: string;
  webhookId: string;
  deliveryId: string;
  /** Epoch ms before which the job must not run (retries longer than SQS's 15-minute delay). */
  notBefore?: number;
  /** Set on scheduled retries: the attempt number this job is for (older jobs are then recognised as stale). */
  attempt?: number;
  /**
   * Set by the fan-out on a new delivery that heads its lane (or has none): the delivery itself, so that
   * its first attempt needs no read and no lease; its outcome is recorded only if no other job recorded
   * one first.
   */
  delivery?: Delivery;
  /**
   * With `delivery`: the event's only delivery, which has no lane item; whoever records its first
   * attempt also deletes the event's outbox item (which held the key's later events back meanwhile).
   */
  clearsOutbox?: boolean;
  /** The subscription's version when the fan-out read it (shared/webhooks/current-subscriptions.ts). */
  subscriptionVersion?: number;
}

/** What a send needs of a subscription. */
export type SubscriptionTarget = Pick<Subscription, 'url' | 'secret'>;

/** The `X-Webhook-Event` of POST /user-webhooks/{id}/test. */
export const TEST_EVENT = 'webhook.test';

/**
 * Whether a delivery of this event may still go to the subscription (an attempt or a redelivery): the subscription
 * takes the event as it is now (its events may have changed since the delivery was made), or it is the test delivery.
 */
export const takesDelivery = (s: Pick<Subscription, 'enabled' | 'events'>, event: string): boolean => event === TEST_EVENT || subscribes(s, event);
