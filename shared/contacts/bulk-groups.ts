/**
 * The writes of a bulk operation: each contact is a unit (its items and events), units are grouped into
 * TransactWriteItems of up to 100 items (with one counter item per stage touched), and a cancelled group's
 * contacts are redone one by one through the single-contact service, each with its own result.
 */
import pLimit from 'p-limit';
import { commit, HookItemsOverflow, type DomainEvent, type TransactItem } from '#shared/events/outbox.ts';
import { ApiError } from '#shared/http/errors.ts';
import { isForeignRecord } from '#shared/auth/ownership.ts';
import { logger } from '#shared/log/logger.ts';
import { stageCountItems } from '#shared/funnel/repository.ts';
import { cancellationCodes } from '#shared/store/transact.ts';
import type { BulkOperation } from './bulk-schemas.ts';

export interface BulkItemResult {
  success: boolean;
  contact_id: string | null;
  /** Create results only: the number as normalised, or as given when it is not one (null when none was). */
  phone_number?: string | null;
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
 * What a group's items and events may take as JSON: a transaction carries at most 4 MB, and commit adds the outbox
 * items (the events again) and the segment counter items. Contacts are at most MAX_CONTACT_DATA_BYTES each.
 */
const TRANSACTION_BYTES = 1_500_000;
/** Groups that touch no shared item (no stage counter) run this many at a time. */
const PARALLEL_GROUPS = 4;
const failedCode: Record<BulkOperation, string> = {
  create: 'create_failed',
  update: 'update_failed',
  delete: 'delete_failed',
  add_tags: 'add_tags_failed',
  remove_tags: 'remove_tags_failed',
  set_funnel_stage: 'set_funnel_failed',
};

export const fail = (contactId: string | null, error: string, message: string, extra: Partial<BulkItemResult> = {}): BulkItemResult =>
  ({ success: false, contact_id: contactId, ...extra, error, message });

/** A single-contact service error as a per-item result. */
export function itemError(op: BulkOperation, contactId: string | null, err: unknown, extra: Partial<BulkItemResult> = {}): BulkItemResult {
  if (err instanceof ApiError) {
    const body = err.body as Record<string, any>;
    // Another account's contact (403 on the single-contact endpoints) is, per item, one this account does not have.
    if (err.status === 404 || isForeignRecord(err, 'contact')) return fail(contactId, 'not_found', err.status === 404 ? String(body.message) : 'Contact not found');
    if (body.error === 'duplicate_contact') return fail(contactId, 'duplicate_contact', String(body.message), { ...extra, existing_contact_id: body.existing_contact_id });
    if (body.details?.phone_number) return fail(contactId, 'invalid_phone_number', `phone_number ${body.details.phone_number[0]}`, extra);
    return fail(contactId, failedCode[op], String(body.message), extra);
  }
  logger.error('bulk item failed', { error: err as Error, operation: op });
  return fail(contactId, failedCode[op], 'The operation failed for this contact', extra);
}

/** Counter items a group needs: one per stage whose count changes. */
const stagesTouched = (units: Unit[]) => new Set(units.flatMap((u) => (u.move && u.move.from !== u.move.to ? [u.move.from, u.move.to] : [])).filter(Boolean));

/**
 * Room left per contact-id range a group touches for the segment counter items commit adds (segments/counters:
 * the range's counter item and, for time-relative rules, usually one minute item). A group past 100 with them
 * is redone contact by contact.
 */
const COUNTER_ITEMS_PER_RANGE = 2;

/** The contact a unit writes (its contact Put). */
const contactIdOf = (u: Unit): string => String(u.items.find((i) => i.Put?.Item?.type === 'contact')?.Put?.Item?.id ?? '');
/** Segment counter ranges a group touches (counters/ranges.ts: the first character of the contact id). */
const rangesTouched = (units: Unit[]) => new Set(units.map((u) => contactIdOf(u).charAt(0))).size;

/**
 * Greedy groups that fit one transaction (contact items + outbox events + stage counters + segment counter
 * items), in count and in bytes. Units go in contact-id order, so each group touches few segment counter ranges and groups running
 * at the same time touch different ones (transactions sharing an item conflict).
 */
function groups(units: Unit[]): Unit[][] {
  const out: Unit[][] = [];
  let current: Unit[] = [];
  let size = 0;
  let bytes = 0;
  for (const u of [...units].sort((a, b) => (contactIdOf(a) < contactIdOf(b) ? -1 : 1))) {
    const own = u.items.length + u.events.length;
    const ownBytes = Buffer.byteLength(JSON.stringify([u.items, u.events]), 'utf8');
    const counters = stagesTouched([...current, u]).size + COUNTER_ITEMS_PER_RANGE * rangesTouched([...current, u]);
    if (current.length > 0 && (size + own + counters > TRANSACTION_ITEMS || bytes + ownBytes > TRANSACTION_BYTES)) {
      out.push(current);
      current = [];
      size = 0;
      bytes = 0;
    }
    current.push(u);
    size += own;
    bytes += ownBytes;
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
      // Cancelled (a condition of one unit, a conflict), or too large once the segment counters joined: one by one.
      if (!cancellationCodes(err) && !(err instanceof HookItemsOverflow)) throw err;
      for (const u of group) results[u.index] = await u.alone();
    }
  })));
}
