/**
 * Contact-id ranges: the unit of the counters' partitions and of the backfill. A range is an interval of the
 * contacts' sort keys (`CONTACT#{id}`), so the backfill reads it from the table itself with strongly consistent
 * queries (never from an index that may lag) and a cursor says exactly which contacts it has passed. Random
 * UUIDs spread evenly over the 16 first hex digits; any other id still falls in exactly one range.
 */
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
