/**
 * SQS worker of the `events` queue: each message is a committed DomainEvent; it becomes one delivery
 * job per matching webhook subscription (shared/webhooks/fanout.ts), and a sent message moves its contact's
 * last_contact_at (shared/messages/activity.ts). Failed records are reported as
 * partial batch failures and retried; after maxReceiveCount they land in the DLQ, and the outbox item
 * they left behind is still picked up by the sweep.
 */
import { recordQueueAges } from '#shared/metrics/metrics.ts';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { RESENT_ATTRIBUTE, type DomainEvent } from '#shared/events/outbox.ts';
import { fanOutBatch } from '#shared/webhooks/fanout.ts';
import { recordSendActivity } from '#shared/messages/activity.ts';

export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
  recordQueueAges('events', event.Records);
  const byEvent = new Map<string, string>();
  const events: DomainEvent[] = [];
  const again = new Set<string>();
  const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
  for (const r of event.Records) {
    try {
      const e = JSON.parse(r.body) as DomainEvent;
      if (!e?.id || !e.businessId || !e.event) throw new Error('not an event');
      byEvent.set(e.id, r.messageId);
      // Received before, or re-published by the sweep: its deliveries may exist already.
      if (r.attributes?.ApproximateReceiveCount !== '1' || r.messageAttributes?.[RESENT_ATTRIBUTE]) again.add(e.id);
      events.push(e);
    } catch {
      batchItemFailures.push({ itemIdentifier: r.messageId });
    }
  }
  const [failed] = await Promise.all([fanOutBatch(events, again), recordSendActivity(events)]);
  for (const id of failed) batchItemFailures.push({ itemIdentifier: byEvent.get(id)! });
  return { batchItemFailures };
};
