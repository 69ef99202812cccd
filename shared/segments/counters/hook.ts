/**
 * How contact writes reach the counters: `contactPut` remembers the record each Put replaces, and the commit
 * hook turns the contact Puts of a transaction into counter items in that same transaction (write.ts). Every
 * contact write is a `contactPut` committed through `commit`, so none can skip its counts. A counter item whose
 * condition failed means the container's copy of that business's counters is stale: it is dropped (copy.ts).
 */
import { addCommitHook, type TransactItem } from '#shared/events/outbox.ts';
import type { CancelCode } from '#shared/store/transact.ts';
import type { Contact } from '#shared/contacts/model.ts';
import { onFirstUse } from '#shared/lang/on-first-use.ts';
import type { ContactChange } from './write.ts';

const writes = new WeakMap<TransactItem, { bid: string; change: ContactChange }>();

/**
 * The counters' code (the segments' rules and filters with it), loaded by the first transaction that writes a
 * contact: most requests of most functions that can write one (a send to a known number) never do.
 */
let counters: { write: typeof import('./write.ts'); copy: typeof import('./copy.ts') } | undefined;
const loadCounters = onFirstUse(async () => (counters = { write: await import('./write.ts'), copy: await import('./copy.ts') }));

export function trackContactWrite(bid: string, before: Contact | null, after: Contact, item: TransactItem): TransactItem {
  writes.set(item, { bid, change: { before, after } });
  return item;
}

async function counterItems(items: TransactItem[]): Promise<TransactItem[]> {
  const byBusiness = new Map<string, ContactChange[]>();
  for (const item of items) {
    const w = writes.get(item);
    if (w) byBusiness.set(w.bid, [...(byBusiness.get(w.bid) ?? []), w.change]);
  }
  if (byBusiness.size === 0) return [];
  const { write } = await loadCounters();
  return (await Promise.all([...byBusiness].map(([bid, changes]) => write.segmentCountItems(bid, changes)))).flat();
}

function cancelled(added: TransactItem[], codes: CancelCode[]): void {
  // Counter items exist only once the counters' code is loaded.
  if (!counters) return;
  const { write, copy } = counters;
  added.forEach((item, i) => {
    const bid = write.counterItemBusiness.get(item);
    if (bid !== undefined && codes[i] === 'ConditionalCheckFailed') copy.dropCopy(bid);
  });
}

addCommitHook({ items: counterItems, cancelled });
