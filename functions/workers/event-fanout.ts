/**
 * SQS worker of the `events` queue: each message is a committed DomainEvent; it becomes one delivery
 * job per matching webhook subscription (shared/webhooks/fanout.ts). Failed records are reported as
 * partial batch failures and retried; after maxReceiveCount they land in the DLQ, and the outbox item
 * they left behind is still picked up by the sweep.
 */
import { recordQueueAges } from '#shared/metrics/metrics.ts';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { DomainEvent } from '#shared/events/outbox.ts';
import { fanOutBatch } from '#shared/webhooks/fanout.ts';

export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
  recordQueueAges('events', event.Records);
  const byEvent = new Map<string, string>();
  const events: DomainEvent[] = [];
  const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
  for (const r of event.Records) {
    try {
      const e = JSON.parse(r.body) as DomainEvent;
      if (!e?.id || !e.businessId || !e.event) throw new Error('not an event');
      byEvent.set(e.id, r.messageId);
      events.push(e);
    } catch {
      batchItemFailures.push({ itemIdentifier: r.messageId });
    }
  }
  const failed = await fanOutBatch(events);
  for (const id of failed) batchItemFailures.push({ itemIdentifier: byEvent.get(id)! });
  return { batchItemFailures };
};
