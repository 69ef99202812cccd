/**
 * Contact-id ranges: the unit of the counters' partitions, of the backfill and of sampled selections. A range is
 * an interval of the contacts' sort keys (`CONTACT#{id}`), so the backfill reads it from the table itself with
 * strongly consistent queries (never from an index that may lag) and a cursor says exactly which contacts it has
 * passed. Random UUIDs spread evenly over the 16 first hex digits; any other id still falls in exactly one range.
 * Read in id order, a range's first contacts are a uniform sample of it (contact ids are random UUIDs).
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';

export const RANGE_COUNT = 16;
const BOUNDS = ['', '1', '2', '3', '4', '5', '6', '7', '8', '9', 'a', 'b', 'c', 'd', 'e', 'f'];

export const RANGES = Array.from({ length: RANGE_COUNT }, (_, r) => r);

export function rangeOf(contactId: string): number {
  for (let r = RANGE_COUNT - 1; r > 0; r--) if (contactId >= BOUNDS[r]) return r;
  return 0;
}

/** The ids of range r: lo ≤ id < hi (hi undefined for the last range). */
export const rangeBounds = (r: number): { lo: string; hi?: string } => ({ lo: BOUNDS[r], hi: BOUNDS[r + 1] });

/** Cursor value of a range the backfill has finished. Sorts after every id the cursor is compared with. */
export const DONE = '\uffff';

/** Whether the counters of a key already include `contactId` (the backfill has passed it). */
export const passed = (cursor: string | undefined, contactId: string) => cursor !== undefined && (cursor === DONE || contactId <= cursor);

export interface RangePage {
  /** Contacts after the cursor in id order; `proj` is absent for a soft-deleted contact. */
  contacts: { id: string; proj?: string }[];
  /** No contact of the range after the last one returned. */
  complete: boolean;
}

/** Up to `limit` contacts of range r after `cursor` (a contact id), strongly consistent, only their id and projection. */
export async function readRangePage(bid: string, r: number, cursor: string | undefined, limit: number): Promise<RangePage> {
  const { lo, hi } = rangeBounds(r);
  const { pk } = keys.contactPrefix(bid);
  const page = await db.send(new QueryCommand({
    TableName: table(),
    KeyConditionExpression: 'pk = :pk AND sk BETWEEN :lo AND :hi',
    ExpressionAttributeValues: { ':pk': pk, ':lo': `CONTACT#${lo}`, ':hi': hi === undefined ? 'CONTACT$' : `CONTACT#${hi}` },
    ExclusiveStartKey: cursor !== undefined ? keys.contact(bid, cursor) : undefined,
    ProjectionExpression: 'id, proj',
    ConsistentRead: true,
    Limit: limit,
  }));
  const contacts: RangePage['contacts'] = [];
  let complete = !page.LastEvaluatedKey;
  for (const c of page.Items ?? []) {
    // BETWEEN includes the next range's bound itself (an id equal to it belongs there).
    if (hi !== undefined && (c.id as string) >= hi) { complete = true; break; }
    contacts.push({ id: c.id as string, proj: c.proj as string | undefined });
  }
  return { contacts, complete };
}
