/**
 * How contact writes reach the counters: `contactPut` remembers the record each Put replaces, and the commit
 * hook turns the contact Puts of a transaction into counter items in that same transaction (write.ts). Every
 * contact write is a `contactPut` committed through `commit`, so none can skip its counts. A counter item whose
 * condition failed means the container's copy of that business's counters is stale: it is dropped (copy.ts).
 */
import { addCommitHook, type TransactItem } from '#shared/events/outbox.ts';
import type { CancelCode } from '#shared/store/transact.ts';
import type { Contact } from '#shared/contacts/model.ts';
import { counterItemBusiness, segmentCountItems, type ContactChange } from './write.ts';
import { dropCopy } from './copy.ts';

const writes = new WeakMap<TransactItem, { bid: string; change: ContactChange }>();

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
  return (await Promise.all([...byBusiness].map(([bid, changes]) => segmentCountItems(bid, changes)))).flat();
}

function cancelled(added: TransactItem[], codes: CancelCode[]): void {
  added.forEach((item, i) => {
    const bid = counterItemBusiness.get(item);
    if (bid !== undefined && codes[i] === 'ConditionalCheckFailed') dropCopy(bid);
  });
}

addCommitHook({ items: counterItems, cancelled });
