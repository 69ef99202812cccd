/**
 * The writing half of bulk contact operations (bulk.ts): units of work grouped into transactions of up to 100
 * items, groups written a few at a time, a cancelled group redone contact by contact.
 */
import pLimit from 'p-limit';
import { commit, type DomainEvent, type TransactItem } from '#shared/events/outbox.ts';
import { stageCountItems } from '#shared/funnel/repository.ts';
import { cancellationCodes } from '#shared/store/transact.ts';

/** One contact's result in a bulk answer. */
export interface BulkItemResult {
  success: boolean;
  contact_id: string | null;
  phone_number?: string;
  error?: string;
  message?: string;
  existing_contact_id?: string;
}

/** One contact's share of a group transaction, and how to redo it alone if the group is cancelled. */
export interface Unit {
  index: number;
  items: TransactItem[];
  events: DomainEvent[];
  move?: { from: string | null; to: string | null };
  done: BulkItemResult;
  alone: () => Promise<BulkItemResult>;
}

const TRANSACTION_ITEMS = 100;
/**
 * Room left per contact-id range a group touches for the segment counter items commit adds (segments/counters:
 * the range's counter item and, for time-relative rules, usually one minute item). A group past 100 with them
 * is redone contact by contact.
 */
const COUNTER_ITEMS_PER_RANGE = 2;
/** Groups that touch no shared item (no stage counter) run this many at a time. */
const PARALLEL_GROUPS = 4;
/** Counter items a group needs: one per stage whose count changes. */
const stagesTouched = (units: Unit[]) => new Set(units.flatMap((u) => (u.move && u.move.from !== u.move.to ? [u.move.from, u.move.to] : [])).filter(Boolean));

/** The contact a unit writes (its contact Put). */
const contactIdOf = (u: Unit): string => String(u.items.find((i) => i.Put?.Item?.type === 'contact')?.Put?.Item?.id ?? '');
/** Segment counter ranges a group touches (counters/ranges.ts: the first character of the contact id). */
const rangesTouched = (units: Unit[]) => new Set(units.map((u) => contactIdOf(u).charAt(0))).size;

/**
 * Greedy groups that fit one transaction (contact items + outbox events + stage counters + segment counter
 * items). Units go in contact-id order, so each group touches few segment counter ranges and groups running
 * at the same time touch different ones (transactions sharing an item conflict).
 */
function groups(units: Unit[]): Unit[][] {
  const out: Unit[][] = [];
  let current: Unit[] = [];
  let size = 0;
  for (const u of [...units].sort((a, b) => (contactIdOf(a) < contactIdOf(b) ? -1 : 1))) {
    const own = u.items.length + u.events.length;
    const counters = stagesTouched([...current, u]).size + COUNTER_ITEMS_PER_RANGE * rangesTouched([...current, u]);
    if (current.length > 0 && size + own + counters > TRANSACTION_ITEMS) {
      out.push(current);
      current = [];
      size = 0;
    }
    current.push(u);
    size += own;
  }
  if (current.length > 0) out.push(current);
  return out;
}

export async function writeGroups(bid: string, units: Unit[], results: BulkItemResult[], parallel: boolean): Promise<void> {
  // Groups that share stage counters would only contend with each other: they run one after the other.
  const limit = pLimit(parallel ? PARALLEL_GROUPS : 1);
  await Promise.all(groups(units).map((group) => limit(async () => {
    const counters = stageCountItems(bid, group.flatMap((u) => (u.move ? [u.move] : []))).items;
    try {
      await commit([...group.flatMap((u) => u.items), ...counters], group.flatMap((u) => u.events));
      for (const u of group) results[u.index] = u.done;
    } catch (err) {
      if (!cancellationCodes(err)) throw err;
      for (const u of group) results[u.index] = await u.alone();
    }
  })));
}
