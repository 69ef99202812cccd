/**
 * Domain events and the outbox. A state change and its event are written in the same DynamoDB
 * transaction (the event as an outbox item), so no event is lost if a function dies after the change.
 * After the commit the event is handed to the `events` queue for fan-out to webhook subscriptions;
 * the fan-out worker removes the outbox item, and a sweep re-publishes any item left behind.
 */
import { uuidv7 } from 'uuidv7';
import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';
import { enqueueAll, QueueBatchError, queueUrl } from '#shared/queue/queue.ts';
import { ConfigurationError } from '#shared/settings/env.ts';
import { logger } from '#shared/log/logger.ts';
import type { EventName } from './names.ts';
import { eventSk, orderingKey, UNORDERED } from './ordering.ts';
import { cancellationCodes, type CancelCode } from '#shared/store/transact.ts';

export interface DomainEvent {
  id: string;
  businessId: string;
  event: EventName;
  data: Record<string, unknown>;
  createdAt: string;
}

export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/**
 * An event of now. Its id is a UUIDv7 that increases within the process (the `uuidv7` package keeps a counter within a
 * millisecond), and the outbox orders by time then id: events made in one millisecond, the several of one commit
 * above all (`conversation.created` then `conversation.assigned`), keep the order they were made in. Random ids
 * let them swap.
 */
export const newEvent = (businessId: string, event: EventName, data: Record<string, unknown>): DomainEvent => {
  const createdAt = new Date().toISOString();
  return { id: uuidv7(), businessId, event, data, createdAt };
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
  const attributes = options.resent ? { attributes: { [RESENT_ATTRIBUTE]: 'sweep' } } : {};
  try {
    await enqueueAll('events', events.map((e) => ({ message: e, options: attributes })));
  } catch (err) {
    if (err instanceof ConfigurationError) throw err;
    const lost = err instanceof QueueBatchError ? err.failed.map((i) => events[i].id) : events.map((e) => e.id);
    logger.warn('event publish failed; the outbox sweep will retry', { eventIds: lost, error: err as Error });
  }
}

const TRANSACTION_LIMIT = 100;

/**
 * Items another area adds to every transaction that writes its inputs (the segment counters add theirs to
 * each contact write), so no write path can forget them. `items` returns [] when the transaction is not its
 * business. `cancelled` hears which of its items failed (their codes), to drop whatever they were built from.
 */
export interface CommitHook {
  items: (items: TransactItem[]) => Promise<TransactItem[]>;
  cancelled?: (added: TransactItem[], codes: CancelCode[]) => void;
}
const hooks: CommitHook[] = [];
export const addCommitHook = (hook: CommitHook) => { if (!hooks.includes(hook)) hooks.push(hook); };

/**
 * The caller's items fit one transaction, but not with the items the hooks added (segment counters): nothing was
 * written, and a caller that groups several units of work redoes them in smaller transactions.
 */
export class HookItemsOverflow extends Error {
  override readonly name = 'HookItemsOverflow';
  constructor(readonly items: number) {
    super(`transaction of ${items} items exceeds ${TRANSACTION_LIMIT} with the items its hooks add`);
  }
}

/** Sends of one transaction whose only failures were in hook items (a stale copy, a conflict on a shared counter). */
const HOOK_ATTEMPTS = 4;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Writes `items` and the outbox items of `events` atomically, then publishes the events.
 * DynamoDB allows 100 items per transaction; callers keep their units of work below that.
 *
 * When the transaction is cancelled by hook items alone (every item of the caller's passed), it is sent again with
 * the hook items built anew: the caller's items and their conditions are unchanged, so this is the same write a
 * moment later. Any other cancellation goes to the caller, which re-reads and retries (store/transact.ts).
 */
export async function commit(items: TransactItem[], events: DomainEvent[] = []): Promise<void> {
  // Without the queue's URL no event could ever be published: fail before the state changes, not after.
  if (events.length > 0) queueUrl('events');
  const own = [...items, ...events.map(outboxPut)];
  for (let attempt = 1; ; attempt++) {
    const added = await Promise.all(hooks.map((h) => h.items(items)));
    const all = [...own, ...added.flat()];
    if (all.length === 0) return;
    if (all.length > TRANSACTION_LIMIT) {
      if (all.length === own.length) throw new Error(`transaction of ${all.length} items exceeds ${TRANSACTION_LIMIT}`);
      throw new HookItemsOverflow(all.length);
    }
    try {
      await db.send(new TransactWriteCommand({ TransactItems: all }));
      break;
    } catch (err) {
      const codes = cancellationCodes(err);
      if (!codes || codes.length !== all.length) throw err;
      let at = own.length;
      for (const [i, h] of hooks.entries()) {
        const mine = codes.slice(at, at + added[i].length);
        at += added[i].length;
        if (mine.some((c) => c !== 'None')) h.cancelled?.(added[i], mine);
      }
      const ownPassed = codes.slice(0, own.length).every((c) => c === 'None');
      if (!ownPassed || attempt >= HOOK_ATTEMPTS) throw err;
      if (codes.includes('TransactionConflict')) await sleep(Math.random() * 10 * attempt);
    }
  }
  await publish(events);
}
