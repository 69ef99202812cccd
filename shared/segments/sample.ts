/**
 * A bounded read of a business's contacts that answers how many match a predicate: exactly when the business
 * is small enough to be read whole within the bound, otherwise as an estimate from a uniform sample. Used where
 * an answer must come at any size without reading every contact: the preview's count, and the refusal of a
 * member selection too large to apply.
 *
 * The 16 contact-id ranges are read in parallel from their first id, in id order (counters/ranges.ts): contact
 * ids are random UUIDs, so the contacts read are a uniform sample of each range, and the last id read says
 * which fraction `f` of the range's id space was covered. A range's matches are estimated as m / f; matching
 * ids below a point are binomial, so its variance is about m (1 - f) / f². `atLeast` is the estimate less six
 * standard deviations (a bound that fails about once in a billion); exact once every range was read whole.
 */
import { decodeProjection, type ProjectedContact } from '#shared/contacts/filters/projection.ts';
import type { Predicate } from '#shared/contacts/filters/predicate.ts';
import { ScanDeadlineExceeded } from '#shared/contacts/filters/scan.ts';
import { RANGE_COUNT, RANGES, readRangePage } from './counters/ranges.ts';

export interface Sample {
  /** The matching contacts read (every match when `complete`). */
  matched: ProjectedContact[];
  /** Every contact was read: the counts below are exact. */
  complete: boolean;
  /** Matches in the whole business: exact when complete, else estimated (rounded). */
  estimate: number;
  /** A lower bound of the matches (exact when complete). */
  atLeast: number;
}

const PAGE = 1000;
const HEX_DIGITS = 13; // 52 bits: exact in a double

/** Where an id lies in the id space, in [0, 1); NaN for an id that is not hexadecimal. */
function position(id: string): number {
  const hex = id.replace(/-/g, '').slice(0, HEX_DIGITS).padEnd(HEX_DIGITS, '0');
  return /^[0-9a-f]+$/i.test(hex) ? parseInt(hex, 16) / 16 ** HEX_DIGITS : Number.NaN;
}

async function sampleRange(bid: string, r: number, test: Predicate, pages: number, deadline: number | undefined) {
  const matched: ProjectedContact[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < pages; i++) {
    if (deadline !== undefined && Date.now() >= deadline) throw new ScanDeadlineExceeded();
    const page = await readRangePage(bid, r, cursor, PAGE);
    for (const c of page.contacts) {
      if (c.proj === undefined) continue;
      const p = decodeProjection(c.proj, c.id);
      if (test(p)) matched.push(p);
    }
    cursor = page.contacts.at(-1)?.id ?? cursor;
    if (page.complete) return { matched, covered: 1 };
  }
  // The share of the range's ids at or below the last one read.
  const covered = cursor === undefined ? 0 : (position(cursor) * RANGE_COUNT - r);
  return { matched, covered };
}

/** Reads at most `pagesPerRange` pages of 1,000 contacts of each range (all 16 in parallel); ScanDeadlineExceeded past `deadline`. */
export async function sampleMatching(bid: string, test: Predicate, pagesPerRange: number, deadline?: number): Promise<Sample> {
  const ranges = await Promise.all(RANGES.map((r) => sampleRange(bid, r, test, pagesPerRange, deadline)));
  const matched = ranges.flatMap((r) => r.matched);
  const complete = ranges.every((r) => r.covered === 1);
  if (complete) return { matched, complete, estimate: matched.length, atLeast: matched.length };
  let estimate = 0;
  let variance = 0;
  for (const { matched: m, covered: f } of ranges) {
    if (!(f > 0)) return { matched, complete, estimate: Number.NaN, atLeast: matched.length }; // ids that say nothing
    estimate += m.length / f;
    variance += (m.length * (1 - f)) / (f * f);
  }
  return { matched, complete, estimate: Math.round(estimate), atLeast: Math.max(matched.length, Math.floor(estimate - 6 * Math.sqrt(variance))) };
}
