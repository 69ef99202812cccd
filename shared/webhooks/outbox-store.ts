/**
 * Reading and clearing the event outbox (written by shared/events/outbox.ts in the same transaction as
 * each state change). The fan-out looks up older events of the same ordering key through the outbox
 * index; the sweep reads the whole index, which only holds events not yet fanned out.
 */
import { BatchWriteCommand, type BatchWriteCommandInput, type BatchWriteCommandOutput } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';
import { queryAll } from '#shared/store/query.ts';
import type { DomainEvent } from '#shared/events/outbox.ts';
import { eventSk } from './ordering.ts';

const toEvent = (item: Record<string, any>): DomainEvent => ({
  id: item.id,
  businessId: item.businessId,
  event: item.event,
  data: item.data ?? {},
  createdAt: item.createdAt,
});

/** Deletes outbox items, 25 per request, retrying what DynamoDB leaves unprocessed. */
export async function deleteOutboxItems(events: DomainEvent[]): Promise<void> {
  const unique = [...new Map(events.map((e) => [`${e.businessId}/${eventSk(e)}`, e])).values()];
  for (let i = 0; i < unique.length; i += 25) {
    let request: BatchWriteCommandInput['RequestItems'] = {
      [table()]: unique.slice(i, i + 25).map((e) => ({ DeleteRequest: { Key: keys.outbox(e.businessId, eventSk(e)) } })),
    };
    for (let tries = 0; request && Object.keys(request).length > 0; tries++) {
      if (tries === 5) throw new Error('outbox items left unprocessed');
      const out: BatchWriteCommandOutput = await db.send(new BatchWriteCommand({ RequestItems: request }));
      request = out.UnprocessedItems;
    }
  }
}

/** Events of the same business and ordering key committed before `e` and not yet fanned out, oldest first. */
export async function earlierEventsOfKey(e: DomainEvent, orderingKey: string): Promise<DomainEvent[]> {
  const { gsi1pk, gsi1sk } = keys.outboxIndex(e.businessId, orderingKey, eventSk(e));
  const prefix = gsi1sk.slice(0, gsi1sk.length - eventSk(e).length);
  const items = await queryAll({
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk BETWEEN :lo AND :hi',
    ExpressionAttributeValues: { ':pk': gsi1pk, ':lo': prefix, ':hi': gsi1sk },
  });
  return items.filter((item) => item.id !== e.id).map(toEvent);
}

/** Every outbox item of one index shard committed before `before` (ISO time). */
export async function outboxItemsBefore(shard: number, before: string): Promise<DomainEvent[]> {
  const items = await queryAll({
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk',
    FilterExpression: 'createdAt < :before',
    ExpressionAttributeValues: { ':pk': keys.outboxIndexPk(shard), ':before': before },
  });
  return items.map(toEvent);
}
