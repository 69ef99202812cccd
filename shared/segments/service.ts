/**
 * The rules of the Segments part of the contract: create, read (live counts), update, delete, preview,
 * evaluate and usage. Member changes are in members.ts.
 */
import { randomUUID } from 'node:crypto';
import { batchGetContacts } from '#shared/contacts/repository.ts';
import type { Contact } from '#shared/contacts/model.ts';
import { compileCondition } from '#shared/contacts/filters/predicate.ts';
import { ScanDeadlineExceeded, byCreatedDesc, newestMatching, selectMatching } from '#shared/contacts/filters/scan.ts';
import { sampleMatching } from './sample.ts';
import type { Filters } from '#shared/contacts/filters/filters.ts';
import { UUID_RE } from '#shared/http/schemas.ts';
import { countDeadline, countSegment, countSegments, type CountOutcome } from './count.ts';
import { isEmptyRules, isLegacyRules, isV3Shape, parseRules, ruleError, rulesCondition, type ParsedRules } from './rules.ts';
import { ruleBoundsError } from './rule-bounds.ts';
import { deletePartition, deleteSegmentItem, getSegment, listSegments, putSegment, updateSegment as updateItem, type SegmentRecord, type SegmentType } from './repository.ts';
import { ruleInvalid, segmentNotFound, selectWithinBudget } from './errors.ts';
import { listSegmentUsage } from './usage.ts';
import { MAX_DYNAMIC_SEGMENTS, newCounterKey, registerCounters } from './counters/registry.ts';
import { badRequest, conflict } from '#shared/http/errors.ts';
import { keys } from '#shared/store/keys.ts';
import { claimSlots, type SlotKind } from '#shared/store/slots.ts';

/** The Segment resource as the API returns it. */
export interface SegmentView {
  id: string;
  name: string;
  description: string | null;
  color: string | null;
  type: SegmentType;
  contactCount: number;
  rules: unknown;
  rulesFormat: 'filters' | 'legacy' | null;
  filters: Filters | null;
  countStale?: true;
  rulesError?: string;
  createdAt: string;
  updatedAt: string;
}

export function toView(r: SegmentRecord, outcome?: CountOutcome): SegmentView {
  const view: SegmentView = {
    id: r.id,
    name: r.name,
    description: r.description,
    color: r.color,
    type: r.segmentType,
    contactCount: outcome ? outcome.count : r.contactCount,
    rules: r.segmentType === 'dynamic' ? r.rules : null,
    rulesFormat: r.segmentType === 'dynamic' ? r.rulesFormat : null,
    filters: r.segmentType === 'dynamic' ? outcome?.filters ?? null : null,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
  if (outcome?.stale) view.countStale = true;
  if (outcome?.rulesError) view.rulesError = outcome.rulesError;
  return view;
}

/** Not a UUID, missing and foreign are the same 404. */
export async function loadSegment(bid: string, id: unknown): Promise<SegmentRecord> {
  if (typeof id !== 'string' || !UUID_RE.test(id)) throw segmentNotFound();
  const record = await getSegment(bid, id.toLowerCase());
  if (!record) throw segmentNotFound();
  return record;
}

/** Rules a client sends (create, update, preview): within the bounds, then valid; else a rule error. */
function parseIncomingRules(rules: unknown): Extract<ParsedRules, { ok: true }> {
  const tooBig = ruleBoundsError(rules);
  if (tooBig) throw ruleInvalid(tooBig);
  const parsed = parseRules(rules);
  if (!parsed.ok) throw ruleInvalid(parsed.error);
  return parsed;
}

/**
 * Rules of a dynamic segment: present and valid, else a rule error. Returns what is stored: v3 rules with
 * their filters in snake_case, legacy rules exactly as given.
 */
function checkDynamicRules(rules: unknown): { format: 'filters' | 'legacy'; rules: unknown } {
  const parsed = parseIncomingRules(rules);
  return { format: parsed.format, rules: parsed.format === 'filters' ? { version: 3, filters: parsed.filters } : rules };
}

/**
 * Rules sent to a static segment: legacy, null or empty ones are ignored (the contract); v3 rules, and rules of no
 * known version or shape, are refused as on a dynamic segment, not dropped without a word.
 */
function checkStaticRules(rules: unknown): void {
  if (isEmptyRules(rules)) return;
  if (isV3Shape(rules)) throw ruleInvalid(V3_ON_STATIC);
  if (isLegacyRules(rules)) return;
  const parsed = parseRules(rules);
  if (!parsed.ok) throw ruleInvalid(parsed.error);
}

const V3_ON_STATIC = ruleError('v3 rules ({ version: 3, filters }) are only for dynamic segments; a static segment holds the contacts you add to it. Remove the rules or create the segment with type "dynamic"');

export interface CreateInput {
  name: string;
  type: SegmentType;
  description?: string | null;
  color?: string | null;
  rules?: unknown;
}

export async function createSegment(bid: string, input: CreateInput): Promise<SegmentView> {
  let rules: unknown = null;
  let rulesFormat: SegmentRecord['rulesFormat'] = null;
  if (input.type === 'dynamic') {
    ({ format: rulesFormat, rules } = checkDynamicRules(input.rules));
  } else {
    checkStaticRules(input.rules);
  }

  const now = new Date().toISOString();
  const record: SegmentRecord = {
    id: randomUUID(),
    name: input.name,
    description: input.description ?? null,
    color: input.color ?? null,
    segmentType: input.type,
    rules,
    rulesFormat,
    contactCount: 0,
    countedAt: null,
    counterKey: input.type === 'dynamic' ? newCounterKey() : null,
    createdAt: now,
    updatedAt: now,
  };
  await putInRoom(bid, record);
  if (record.segmentType === 'static') return toView(record, { count: 0, stale: false, filters: null });
  // After the segment item: a contact write that sees the new `v` also sees this segment (counters/write.ts).
  await registerCounters(bid);
  return toView(record, await countSegment(bid, record, { deadline: countDeadline() }));
}

/**
 * At most this many segments, static and dynamic, per business: `GET /segments` answers with all of them, counted, in
 * one response (a Lambda response is at most 6 MB; a segment with the longest name, description and color is about 4 KB, schemas.ts).
 */
export const MAX_SEGMENTS = 1000;

/**
 * Past a cap, a 400 and no segment: every dynamic segment adds to every contact write's counter update, and every
 * segment to every `GET /segments`. The list gives the message; the places and slots (putInRoom) make the caps exact.
 */
function assertRoom(segments: SegmentRecord[], type: SegmentType): void {
  if (segments.length >= MAX_SEGMENTS) {
    throw badRequest('segment_limit_reached', `A business has at most ${MAX_SEGMENTS} segments; delete one before adding another`);
  }
  if (type === 'dynamic' && segments.filter(isDynamic).length >= MAX_DYNAMIC_SEGMENTS) {
    throw badRequest('segment_limit_reached', `A business has at most ${MAX_DYNAMIC_SEGMENTS} dynamic segments; delete one (or use a static segment) before adding another`);
  }
}

const isDynamic = (s: SegmentRecord): boolean => s.segmentType === 'dynamic';

/** Tries of a create whose randomly picked free place or slot another create took first. */
const CLAIM_TRIES = 8;

/**
 * Stores a new segment in a free place of the MAX_SEGMENTS and, when dynamic, a free slot of the MAX_DYNAMIC_SEGMENTS
 * (shared/store/slots.ts): their conditional puts in the segment's transaction are what make both caps exact.
 */
async function putInRoom(bid: string, record: SegmentRecord): Promise<void> {
  const kinds: SlotKind<SegmentRecord[]>[] = [{ max: MAX_SEGMENTS, held: (segments) => segments.map((s) => s.place) }];
  if (isDynamic(record)) kinds.push({ max: MAX_DYNAMIC_SEGMENTS, held: (segments) => segments.filter(isDynamic).map((s) => s.slot) });
  const claimed = await claimSlots({
    kinds,
    read: async () => {
      const segments = await listSegments(bid, true);
      assertRoom(segments, record.segmentType);
      return segments;
    },
    store: async (_, [place, slot = null]) => ((await putSegment(bid, { ...record, place, slot })) ? { place, slot } : undefined),
    tries: CLAIM_TRIES,
    exhausted: () => conflict('segment_create_conflict', 'Other segments were being created at the same time; try again'),
  });
  Object.assign(record, claimed);
}

export async function listSegmentViews(bid: string): Promise<SegmentView[]> {
  const records = (await listSegments(bid)).sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
  if (records.length === 0) return [];
  const outcomes = await countSegments(bid, records, { deadline: countDeadline() });
  return records.map((r) => toView(r, outcomes.get(r.id)));
}

export interface SegmentDetail extends SegmentView {
  contacts: Contact[];
  pagination: { limit: number; offset: number; total: number; hasMore: boolean };
}

/** Contacts of the given ids, in that order (skipping any deleted between the read and now). */
export async function contactsInOrder(bid: string, ids: string[]): Promise<Contact[]> {
  if (ids.length === 0) return [];
  const found = await batchGetContacts(bid, ids);
  return ids.map((id) => found.get(id)?.contact).filter((c): c is Contact => !!c && !c.deleted_at);
}

/**
 * A dynamic segment's count comes from its counters and its page of members from the newest contacts, read only
 * as far as the page needs (scan.ts newestMatching), both at once; a static segment is counted and listed from its
 * members (count.ts), and invalid rules hold nobody. A page that cannot be read in time answers empty with
 * `countStale`, as a count would.
 */
export async function getSegmentDetail(bid: string, record: SegmentRecord, page: { limit: number; offset: number }): Promise<SegmentDetail> {
  const deadline = countDeadline();
  const parsed = record.segmentType === 'dynamic' ? parseRules(record.rules) : null;
  if (!parsed?.ok) return collectedDetail(bid, record, page, deadline);
  const test = compileCondition(rulesCondition(parsed, Date.now()));
  const [outcome, newest] = await Promise.all([
    countSegment(bid, record, { deadline }),
    newestMatching(bid, test, page.offset + page.limit, { deadline }).catch((err) => {
      if (err instanceof ScanDeadlineExceeded) return null;
      throw err;
    }),
  ]);
  const view = toView(record, newest ? outcome : { ...outcome, stale: true });
  const ids = (newest ?? []).slice(page.offset).map((c) => c.id);
  return {
    ...view,
    contacts: await contactsInOrder(bid, ids),
    pagination: { limit: page.limit, offset: page.offset, total: view.contactCount, hasMore: page.offset + ids.length < view.contactCount },
  };
}

async function collectedDetail(bid: string, record: SegmentRecord, page: { limit: number; offset: number }, deadline: number): Promise<SegmentDetail> {
  const outcome = await countSegment(bid, record, { deadline, collect: true });
  const matched = outcome.matched ?? [];
  const ids = matched.slice(page.offset, page.offset + page.limit).map((c) => c.id);
  const view = toView(record, outcome);
  return {
    ...view,
    contacts: await contactsInOrder(bid, ids),
    pagination: { limit: page.limit, offset: page.offset, total: outcome.stale ? view.contactCount : matched.length, hasMore: page.offset + ids.length < matched.length },
  };
}

export interface UpdateInput {
  name?: string;
  description?: string | null;
  color?: string | null;
  rules?: unknown;
  type?: unknown;
}

export async function updateSegment(bid: string, record: SegmentRecord, input: UpdateInput): Promise<SegmentView & { typeChangeIgnored?: true }> {
  const changes: Parameters<typeof updateItem>[2] = {};
  if (input.name !== undefined) changes.name = input.name;
  if (input.description !== undefined) changes.description = input.description;
  if (input.color !== undefined) changes.color = input.color;
  if ('rules' in input && input.rules !== undefined) {
    if (record.segmentType === 'dynamic') {
      ({ format: changes.rulesFormat, rules: changes.rules } = checkDynamicRules(input.rules));
      // New rules, new counters: the old ones are dropped and the new ones backfilled.
      changes.counterKey = newCounterKey();
    } else {
      checkStaticRules(input.rules);
    }
  }
  changes.updatedAt = new Date().toISOString();
  const updated = await updateItem(bid, record.id, changes);
  if (!updated) throw segmentNotFound();
  if (changes.counterKey) await registerCounters(bid, record.counterKey ? [record.counterKey] : []);
  const view: SegmentView & { typeChangeIgnored?: true } = toView(updated, await countSegment(bid, updated, { deadline: countDeadline() }));
  if (input.type !== undefined && input.type !== record.segmentType) view.typeChangeIgnored = true;
  return view;
}

/** Deletes the segment and its member list; the contacts themselves are kept. */
export async function deleteSegment(bid: string, id: unknown): Promise<{ id: string }> {
  const record = await loadSegment(bid, id);
  if (!(await deleteSegmentItem(bid, record))) throw segmentNotFound();
  await deletePartition(keys.segmentMembersPk(bid, record.id));
  if (record.counterKey) await registerCounters(bid, [record.counterKey]);
  return { id: record.id };
}

/**
 * Recomputes and stores the count (any segment type; the contract names dynamic ones). For a dynamic segment this
 * is the counters' repair path: fresh counters, backfilled from the contacts (countStale until that finishes).
 */
export async function evaluateSegment(bid: string, id: unknown): Promise<SegmentView & { evaluatedAt: string }> {
  let record = await loadSegment(bid, id);
  if (record.segmentType === 'dynamic' && parseRules(record.rules).ok) {
    const updated = await updateItem(bid, record.id, { counterKey: newCounterKey() });
    if (!updated) throw segmentNotFound();
    await registerCounters(bid, record.counterKey ? [record.counterKey] : []);
    record = updated;
  }
  const outcome = await countSegment(bid, record, { deadline: countDeadline() });
  return { ...toView(record, outcome), evaluatedAt: new Date().toISOString() };
}

export const PREVIEW_SAMPLE = 10;
/** Pages of 1,000 contacts per id range a preview reads: up to 32,000 contacts its count is exact, past that estimated. */
const PREVIEW_PAGES = 2;

/**
 * Count and a sample of the contacts that rules select, without storing anything. The count comes from a bounded
 * read (sample.ts), so a preview answers in the same time at any size: exact for a business read whole, else an
 * estimate flagged `countEstimated` (the sample is then the newest matches among the contacts read).
 */
export async function previewRules(bid: string, rules: unknown, sample = PREVIEW_SAMPLE) {
  if (isEmptyRules(rules)) throw ruleInvalid(ruleError('Rules are missing: send { "rules": { "version": 3, "filters": { ... } } } with at least one filter'));
  const parsed = parseIncomingRules(rules);
  const test = compileCondition(rulesCondition(parsed, Date.now()));
  const deadline = countDeadline();
  const read = await selectWithinBudget(() => sampleMatching(bid, test, PREVIEW_PAGES, deadline));
  const estimated = !read.complete && !Number.isNaN(read.estimate);
  // Ids that are not UUIDs say nothing of the share read: then only the whole read answers.
  const matched = read.complete || estimated ? read.matched.sort(byCreatedDesc).map((c) => c.id) : await selectWithinBudget(() => selectMatching(bid, test, { deadline }));
  return {
    count: estimated ? read.estimate : matched.length,
    ...(estimated ? { countEstimated: true } : {}),
    preview: await contactsInOrder(bid, matched.slice(0, sample)),
    rulesFormat: parsed.format,
  };
}

export async function segmentUsage(bid: string, id: unknown) {
  const record = await loadSegment(bid, id);
  return { segmentId: record.id, ...(await listSegmentUsage(bid, record.id)) };
}
