/** What the API shows of subscriptions and deliveries (never the secret, apart from create and regenerate). */
import type { Delivery, Subscription } from './model.ts';

export const subscriptionView = (s: Subscription) => ({
  id: s.id,
  name: s.name,
  url: s.url,
  events: s.events,
  enabled: s.enabled,
  disabledReason: s.disabledReason ?? null,
  disabledAt: s.disabledAt ?? null,
  createdAt: s.createdAt,
  updatedAt: s.updatedAt,
});

export const deliveryView = (d: Delivery) => ({
  id: d.id,
  webhookId: d.webhookId,
  eventId: d.eventId,
  event: d.event,
  status: d.status,
  attemptCount: d.attemptCount,
  nextAttemptAt: d.status === 'pending' ? d.nextAttemptAt : null,
  createdAt: d.createdAt,
  deliveredAt: d.deliveredAt ?? null,
  failedAt: d.failedAt ?? null,
  failureReason: d.failureReason ?? null,
  attempts: (d.attempts ?? []).map((a) => ({ attempt: a.attempt, at: a.at, statusCode: a.statusCode, durationMs: a.durationMs, error: a.error })),
  payload: { event: d.event, data: d.data },
});
