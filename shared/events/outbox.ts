/**
 * Domain events and the outbox. A state change and its event are written in the same DynamoDB
 * transaction (the event as an outbox item), so no event is lost if a function dies after the change.
 * After the commit the event is handed to the `events` queue for fan-out to webhook subscriptions;
 * the fan-out worker removes the outbox item, and a sweep re-publishes any item left behind.
 */
import { randomUUID } from 'node:crypto';
import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';
import { enqueue, queueUrl } from '#shared/queue/queue.ts';
import { ConfigurationError } from '#shared/settings/env.ts';
import { logger } from '#shared/log/logger.ts';
import type { EventName } from './names.ts';
import { eventSk, orderingKey, UNORDERED } from './ordering.ts';

export interface DomainEvent {
  id: string;
  businessId: string;
  event: EventName;
  data: Record<string, unknown>;
  createdAt: string;
}

export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

export const newEvent = (businessId: string, event: EventName, data: Record<string, unknown>): DomainEvent => {
  const createdAt = new Date().toISOString();
  return { id: randomUUID(), businessId, event, data, createdAt };
};

export const outboxPut = (e: DomainEvent): TransactItem => ({
  Put: {
    TableName: table(),
    // Kept in its ordering key's partition (the fan-out reads it with the key's lanes); the index entry lets the sweep find leftovers.
    Item: { ...outboxKey(e), ...keys.outboxIndex(e.businessId, orderingKey(e) ?? UNORDERED, eventSk(e)), type: 'outbox', ...e },
  },
});

export const outboxKey = (e: Pick<DomainEvent, 'businessId' | 'id' | 'createdAt' | 'event' | 'data'>) =>
  keys.outbox(e.businessId, orderingKey(e) ?? UNORDERED, eventSk(e));

/** Message attribute of events the outbox sweep publishes again (their fan-out checks for earlier work). */
export const RESENT_ATTRIBUTE = 'resent';

/**
 * Hands committed events to the fan-out queue. A failed send loses nothing: the outbox item stays for the sweep.
 * A missing queue URL is not a failed send but a deployment defect the sweep shares, so it is thrown.
 */
export async function publish(events: DomainEvent[], options: { resent?: boolean } = {}): Promise<void> {
  for (const e of events) {
    try {
      await enqueue('events', e, options.resent ? { attributes: { [RESENT_ATTRIBUTE]: 'sweep' } } : {});
    } catch (err) {
      if (err instanceof ConfigurationError) throw err;
      logger.warn('event publish failed; the outbox sweep will retry', { eventId: e.id, error: err as Error });
    }
  }
}

const TRANSACTION_LIMIT = 100;

/**
 * Items another area adds to every transaction that writes its inputs (the segment counters add theirs to
 * each contact write), so no write path can forget them. A hook returns [] when the transaction is not its business.
 */
type CommitHook = (items: TransactItem[]) => Promise<TransactItem[]>;
const hooks: CommitHook[] = [];
export const addCommitHook = (hook: CommitHook) => { if (!hooks.includes(hook)) hooks.push(hook); };

/**
 * Writes `items` and the outbox items of `events` atomically, then publishes the events.
 * DynamoDB allows 100 items per transaction; callers keep their units of work below that.
 */
export async function commit(items: TransactItem[], events: DomainEvent[] = []): Promise<void> {
  const added = (await Promise.all(hooks.map((h) => h(items)))).flat();
  const all = [...items, ...events.map(outboxPut), ...added];
  if (all.length === 0) return;
  if (all.length > TRANSACTION_LIMIT) {
    if (added.length === 0) throw new Error(`transaction of ${all.length} items exceeds ${TRANSACTION_LIMIT}`);
    // Grown past the limit by hook items: a cancellation, so a grouped caller redoes its items one by one.
    throw Object.assign(new Error(`transaction of ${all.length} items exceeds ${TRANSACTION_LIMIT} with its counter items`), { name: 'TransactionCanceledException', CancellationReasons: [] });
  }
  // Without the queue's URL no event could ever be published: fail before the state changes, not after.
  if (events.length > 0) queueUrl('events');
  await db.send(new TransactWriteCommand({ TransactItems: all }));
  await publish(events);
}
