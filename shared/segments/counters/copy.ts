/**
 * The container's copy of each business's counter items and counted rules, so that a contact write builds its
 * counter items without reading them first. The copy is optimistic: every item a write builds from it carries
 * the condition that proves it current (`v = :v` for the counters registered, each not-passed cursor still ahead,
 * `attribute_not_exists(pk)` where the copy has no counter item). A stale copy therefore cancels the transaction
 * on one of those conditions; the copy is dropped and read again (one BatchGetItem of the 16 counter items, then
 * the segment list), and the transaction is sent again (events/outbox.ts `commit`).
 *
 * A business this container has never seen is assumed to have no counters (nothing read): a business without
 * dynamic segments pays no request at all, one with them pays one cancelled transaction per container.
 * The rules are always read after the items they go with: a list read after a `v` includes every counter
 * registered by then (registry.ts), and a newer list than the items only adds counters no range has passed yet.
 */
import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';
import { RANGES } from './ranges.ts';
import { listCountedRules, onCountersRegistered, type CountedRule } from './registry.ts';

export interface CounterCopy {
  /** Counter item of each range (undefined: none exists). */
  items: (Record<string, any> | undefined)[];
  rules: CountedRule[];
}

const NONE: CounterCopy = { items: RANGES.map(() => undefined), rules: [] };
/** Businesses whose copy is kept; the oldest is forgotten past this (it is then assumed empty again, optimistically). */
const MAX_BUSINESSES = 2000;

const copies = new Map<string, CounterCopy | 'stale'>();
/** Bumped by every drop: a read that started before a drop is used once but not kept. */
let generation = 0;

async function readCopy(bid: string): Promise<CounterCopy> {
  const items: CounterCopy['items'] = RANGES.map(() => undefined);
  let pending: Record<string, unknown>[] | undefined = RANGES.map((r) => keys.segmentCounter(bid, r));
  while (pending && pending.length > 0) {
    const res: any = await db.send(new BatchGetCommand({ RequestItems: { [table()]: { Keys: pending, ConsistentRead: true } } }));
    for (const item of res.Responses?.[table()] ?? []) items[Number(String(item.pk).slice(String(item.pk).lastIndexOf('#') + 1))] = item;
    pending = res.UnprocessedKeys?.[table()]?.Keys;
  }
  // After the items (see above).
  const rules = items.some(Boolean) ? await listCountedRules(bid) : [];
  return { items, rules };
}

/** The copy a write builds from: kept, assumed empty for a business never seen, or read again after a drop. */
export async function counterCopy(bid: string): Promise<CounterCopy> {
  const kept = copies.get(bid);
  if (kept === undefined) return NONE;
  if (kept !== 'stale') return kept;
  const started = generation;
  const fresh = await readCopy(bid);
  if (generation === started && copies.get(bid) === 'stale') remember(bid, fresh);
  return fresh;
}

function remember(bid: string, copy: CounterCopy | 'stale'): void {
  copies.delete(bid);
  copies.set(bid, copy);
  if (copies.size > MAX_BUSINESSES) copies.delete(copies.keys().next().value!);
}

/** A condition built from the copy failed, or this container changed the counters: read them before the next write. */
export function dropCopy(bid: string): void {
  generation++;
  remember(bid, 'stale');
}

// Counters registered by this container: its own next write reads them instead of paying a cancelled transaction.
onCountersRegistered(dropCopy);
