/**
 * Reading and clearing the event outbox (written by shared/events/outbox.ts in the same transaction as
 * each state change). Outbox items live in their ordering key's partition beside that key's delivery
 * lanes, so the fan-out reads older events of the key and the lanes together (a whole batch's keys, and
 * its businesses' subscriptions, in one consistent statement); the sweep reads the outbox index, which
 * only holds events not yet fanned out.
 */
import { DeleteCommand, ExecuteStatementCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { batchWriteAll } from '#shared/store/batch.ts';
import { db, table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';
import { queryAll } from '#shared/store/query.ts';
import { outboxKey, type DomainEvent } from '#shared/events/outbox.ts';
import { laneEntry, type LaneEntry } from './lane-store.ts';
import { listSubscriptions, SUBSCRIPTION_ATTRIBUTES, subscriptionsInOrder } from './subscription-store.ts';
import type { Delivery, Subscription } from './model.ts';
import { eventSk, UNORDERED } from '#shared/events/ordering.ts';

const toEvent = (item: Record<string, any>): DomainEvent => ({
  id: item.id,
  businessId: item.businessId,
  event: item.event,
  data: item.data ?? {},
  createdAt: item.createdAt,
});

/** Deletes outbox items in batched writes. */
export async function deleteOutboxItems(events: DomainEvent[]): Promise<void> {
  const unique = [...new Map(events.map((e) => [`${e.businessId}/${eventSk(e)}`, e])).values()];
  await batchWriteAll(unique.map((e) => ({ DeleteRequest: { Key: outboxKey(e) } })));
}

/** The outbox item of a delivery's event. */
export const eventOutboxKey = (d: Pick<Delivery, 'businessId' | 'laneKey' | 'eventCreatedAt' | 'eventId'>) =>
  keys.outbox(d.businessId, d.laneKey ?? UNORDERED, eventSk({ createdAt: d.eventCreatedAt, id: d.eventId }));

/** Deletes the outbox item of a delivery's event (its first attempt took over from it). */
export async function clearEventOutbox(d: Delivery): Promise<void> {
  await db.send(new DeleteCommand({ TableName: table(), Key: eventOutboxKey(d) }));
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

const outboxEntry = (item: Record<string, any>) => ({ id: item.id as string, sk: (item.sk as string).slice(keys.outboxSkPrefix.length) });

/** Sorts a partition's items (in key order) into its outbox entries up to `last` and its lanes. */
function partitionOf(items: Record<string, any>[], last: string): KeyPartition {
  const lanes = new Map<string, LaneEntry[]>();
  const outbox: KeyPartition['outbox'] = [];
  for (const item of items) {
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
 * Reads an ordering key's partition in one consistent query: its outbox items (events not yet fanned
 * out) and the lanes of every subscription (deliveries not yet done).
 */
export async function readKeyPartition(businessId: string, orderingKey: string, upToSk: string): Promise<KeyPartition> {
  const pk = keys.eventKeyPk(businessId, orderingKey);
  const last = `${keys.outboxSkPrefix}${upToSk}`;
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
  return partitionOf(out.Items ?? [], last);
}

/** Partitions per PartiQL statement (DynamoDB takes up to 50 values in an IN on the partition key). */
const PARTITIONS_PER_STATEMENT = 50;

/** What the statement selects: what ordering needs of a key's partition, and the whole of each subscription. */
const STATEMENT_ATTRIBUTES = [...new Set(['pk', 'sk', 'type', 'id', 'webhookId', 'laneSk', 'deliveryId', 'nextAttemptAt', ...SUBSCRIPTION_ATTRIBUTES])]
  .map((a) => `"${a}"`).join(', ');

type ReadRequest<T> = { pk: string; resolve: (value: T) => void; reject: (err: unknown) => void };
type PartitionRequest = ReadRequest<KeyPartition> & { kind: 'partition'; businessId: string; orderingKey: string; upToSk: string };
type SubscriptionsRequest = ReadRequest<Subscription[]> & { kind: 'subscriptions'; businessId: string };
type FanOutRequest = PartitionRequest | SubscriptionsRequest;

/** Answers one request on its own (when the statement's partitions held too much to read in one go). */
function readAlone(r: FanOutRequest): Promise<void> {
  return r.kind === 'partition'
    ? readKeyPartition(r.businessId, r.orderingKey, r.upToSk).then(r.resolve, r.reject)
    : listSubscriptions(r.businessId, true).then(r.resolve, r.reject);
}

/**
 * Reads the partitions of several requests in one consistent PartiQL statement (`WHERE pk IN [...]`, a
 * query of each partition, never a scan); when they hold more than a page each between them, each
 * request is read on its own instead.
 */
async function readPartitions(requests: FanOutRequest[]): Promise<void> {
  for (let i = 0; i < requests.length; i += PARTITIONS_PER_STATEMENT) {
    const chunk = requests.slice(i, i + PARTITIONS_PER_STATEMENT);
    const pks = [...new Set(chunk.map((r) => r.pk))];
    try {
      const items: Record<string, any>[] = [];
      let next: string | undefined;
      do {
        const out = await db.send(new ExecuteStatementCommand({
          Statement: `SELECT ${STATEMENT_ATTRIBUTES} FROM "${table()}" WHERE pk IN [${pks.map(() => '?').join(', ')}]`,
          Parameters: pks,
          ConsistentRead: true,
          NextToken: next,
        }));
        items.push(...(out.Items ?? []));
        next = out.NextToken;
      } while (next && items.length <= PARTITION_PAGE * pks.length);
      if (next) {
        await Promise.all(chunk.map(readAlone));
        continue;
      }
      const byPk = new Map<string, Record<string, any>[]>();
      for (const item of items) {
        const list = byPk.get(item.pk);
        if (list) list.push(item);
        else byPk.set(item.pk, [item]);
      }
      for (const r of chunk) {
        const items = (byPk.get(r.pk) ?? []).sort((x, y) => (x.sk < y.sk ? -1 : x.sk > y.sk ? 1 : 0));
        if (r.kind === 'subscriptions') {
          r.resolve(subscriptionsInOrder(items));
          continue;
        }
        const partition = partitionOf(items, `${keys.outboxSkPrefix}${r.upToSk}`);
        // A crowded key gets the same answer as from a read of its own: lane checks are the delivery worker's.
        r.resolve(items.length >= PARTITION_PAGE ? { outbox: partition.outbox, lanes: undefined } : partition);
      }
    } catch (err) {
      for (const r of chunk) r.reject(err);
    }
  }
}

/** The fan-out's reads: a business's subscriptions, an ordering key's partition up to an event. */
export interface FanOutReader {
  /** The business's subscriptions, read consistently, oldest first (one read per business and reader). */
  subscriptions(businessId: string): Promise<Subscription[]>;
  partition(businessId: string, orderingKey: string, upToSk: string): Promise<KeyPartition>;
}

/**
 * A reader that gathers the reads asked for in the same turn of the event loop (the groups of one
 * fan-out batch, planned in parallel) into one statement: the subscriptions of the batch's businesses
 * and the partitions of its ordering keys come back in a single round trip.
 */
export function fanOutReader(): FanOutReader {
  let pending: FanOutRequest[] = [];
  const ask = (request: FanOutRequest) => {
    if (pending.length === 0) {
      setImmediate(() => {
        const requests = pending;
        pending = [];
        void readPartitions(requests);
      });
    }
    pending.push(request);
  };
  const subscriptions = new Map<string, Promise<Subscription[]>>();
  return {
    subscriptions: (businessId) => {
      let read = subscriptions.get(businessId);
      if (!read) {
        read = new Promise((resolve, reject) => ask({ kind: 'subscriptions', pk: keys.webhooksPk(businessId), businessId, resolve, reject }));
        subscriptions.set(businessId, read);
      }
      return read;
    },
    partition: (businessId, orderingKey, upToSk) => new Promise((resolve, reject) =>
      ask({ kind: 'partition', pk: keys.eventKeyPk(businessId, orderingKey), businessId, orderingKey, upToSk, resolve, reject })),
  };
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
      ExpressionAttributeValues: { ':pk': keys.outboxIndexPk(shard), ':b': keys.outboxIndexBusinessPrefix(businessId) },
    });
    all.push(...items.map(toEvent));
  }
  return all.sort((a, b) => eventSk(a).localeCompare(eventSk(b)));
}
