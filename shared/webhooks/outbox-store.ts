/**
 * Reading and clearing the event outbox (written by shared/events/outbox.ts in the same transaction as
 * each state change). Outbox items live in their ordering key's partition beside that key's delivery
 * lanes, so the fan-out reads older events of the key and the lanes in one consistent query; the sweep
 * reads the outbox index, which only holds events not yet fanned out.
 */
import { BatchWriteCommand, QueryCommand, type BatchWriteCommandInput, type BatchWriteCommandOutput } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';
import { queryAll } from '#shared/store/query.ts';
import { outboxKey, type DomainEvent } from '#shared/events/outbox.ts';
import { laneEntry, type LaneEntry } from './repository.ts';
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
      [table()]: unique.slice(i, i + 25).map((e) => ({ DeleteRequest: { Key: outboxKey(e) } })),
    };
    for (let tries = 0; request && Object.keys(request).length > 0; tries++) {
      if (tries === 5) throw new Error('outbox items left unprocessed');
      const out: BatchWriteCommandOutput = await db.send(new BatchWriteCommand({ RequestItems: request }));
      request = out.UnprocessedItems;
    }
  }
}

/** What the partition of one ordering key holds up to an event: what the fan-out needs to keep order. */
export interface KeyPartition {
  /** Events of the key still in the outbox (ids and outbox sort keys), up to and including the given one, oldest first. */
  outbox: { id: string; sk: string }[];
  /**
   * Lane items per subscription (oldest first), or undefined when the partition was too large to read
   * in one page: then no delivery of this key may be taken for a lane head without checking.
   */
  lanes: Map<string, LaneEntry[]> | undefined;
}

/** One page is plenty for a key's pending events and lanes; a key with more falls back to per-delivery checks. */
const PARTITION_PAGE = 200;
/** Only what ordering needs (the events themselves come with the queue messages). */
const PARTITION_PROJECTION = { ProjectionExpression: 'sk, #t, id, webhookId, laneSk, deliveryId, nextAttemptAt', ExpressionAttributeNames: { '#t': 'type' } };

/**
 * Reads an ordering key's partition in one consistent query: its outbox items (events not yet fanned
 * out) and the lanes of every subscription (deliveries not yet done).
 */
export async function readKeyPartition(businessId: string, orderingKey: string, upToSk: string): Promise<KeyPartition> {
  const pk = keys.eventKeyPk(businessId, orderingKey);
  const last = `${keys.outboxSkPrefix}${upToSk}`;
  const outboxEntry = (item: Record<string, any>) => ({ id: item.id as string, sk: (item.sk as string).slice(keys.outboxSkPrefix.length) });
  const out = await db.send(new QueryCommand({
    TableName: table(),
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': pk },
    ConsistentRead: true,
    Limit: PARTITION_PAGE,
    ...PARTITION_PROJECTION,
  }));
  if (out.LastEvaluatedKey) {
    // A crowded key: read the outbox part whole, and leave lane checks to the delivery worker.
    const items = await queryAll({
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :lo AND :hi',
      ExpressionAttributeValues: { ':pk': pk, ':lo': keys.outboxSkPrefix, ':hi': last },
      ConsistentRead: true,
      ...PARTITION_PROJECTION,
    });
    return { outbox: items.map(outboxEntry), lanes: undefined };
  }
  const lanes = new Map<string, LaneEntry[]>();
  const outbox: KeyPartition['outbox'] = [];
  for (const item of out.Items ?? []) {
    const sk = item.sk as string;
    if (sk.startsWith(keys.outboxSkPrefix)) {
      if (sk <= last) outbox.push(outboxEntry(item));
    } else if (item.type === 'lane') {
      const list = lanes.get(item.webhookId) ?? [];
      list.push(laneEntry(item));
      lanes.set(item.webhookId, list);
    }
  }
  return { outbox, lanes };
}

/**
 * Whether an event of the key committed before the one at `eventSk` is still in the outbox (not yet
 * fanned out): a delivery of the later event must wait for it.
 */
export async function hasEarlierOutboxEvent(businessId: string, orderingKey: string, eventSkOfDelivery: string): Promise<boolean> {
  const out = await db.send(new QueryCommand({
    TableName: table(),
    KeyConditionExpression: 'pk = :pk AND sk BETWEEN :lo AND :hi',
    ExpressionAttributeValues: { ':pk': keys.eventKeyPk(businessId, orderingKey), ':lo': keys.outboxSkPrefix, ':hi': `${keys.outboxSkPrefix}${eventSkOfDelivery}` },
    ConsistentRead: true,
    Limit: 2,
  }));
  return (out.Items ?? []).some((item) => item.sk !== `${keys.outboxSkPrefix}${eventSkOfDelivery}`);
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

/** Every outbox item of a business (all index shards), oldest first: for tests and diagnostics. */
export async function outboxItemsOf(businessId: string): Promise<DomainEvent[]> {
  const all: DomainEvent[] = [];
  for (let shard = 0; shard < keys.outboxShards; shard++) {
    const items = await queryAll({
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk AND begins_with(gsi1sk, :b)',
      ExpressionAttributeValues: { ':pk': keys.outboxIndexPk(shard), ':b': `B#${businessId}#` },
    });
    all.push(...items.map(toEvent));
  }
  return all.sort((a, b) => eventSk(a).localeCompare(eventSk(b)));
}
