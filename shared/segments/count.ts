/**
 * Live counts (and member lists) of segments. Dynamic segments come from their maintained counters; a dynamic
 * segment they do not serve is evaluated by one parallel read of the contact projection. Static segments count
 * their members that are still active, read by id (each contact once, however many of the segments hold it): the
 * work follows the members, not the business's contacts, up to MAX_READ_BY_ID of them; static segments holding more
 * between them join the projection read, which costs far less per contact. A read that does not finish within the
 * budget answers "stale" (the last stored count) instead of failing the request.
 */
import pLimit from 'p-limit';
import { config } from '#shared/config.ts';
import { batchGetContacts } from '#shared/contacts/repository.ts';
import { compileCondition, type Predicate } from '#shared/contacts/filters/predicate.ts';
import { filtersToCondition, type Filters } from '#shared/contacts/filters/filters.ts';
import { projectContact, type ProjectedContact } from '#shared/contacts/filters/projection.ts';
import { ScanDeadlineExceeded, byCreatedDesc, scanProjection } from '#shared/contacts/filters/scan.ts';
import { equivalentFilters, parseRules, rulesCondition } from './rules.ts';
import { listMemberIds, storeCount, type SegmentRecord } from './repository.ts';
import { maintainedCounts, type MaintainedCount } from './counters/counts.ts';

export interface CountOutcome {
  count: number;
  /** The live count could not finish in time; `count` is the last stored one. */
  stale: boolean;
  rulesError?: string;
  /** v3 filters (for legacy rules: an exact equivalent that counted the same, else null). */
  filters: Filters | null;
  /** Matching active contacts, newest first (only when asked with `collect`). */
  matched?: ProjectedContact[];
}

/** Members read by id: one BatchGetItem of 100 (its maximum) per group, this many at once. */
const MEMBER_GROUP = 100;
const MEMBER_GROUPS_AT_ONCE = 16;
/**
 * Past this many distinct members, static segments are counted by the projection read instead: a member read by
 * id costs 1 RCU (a consistent read of a contact item), a contact of the projection about 1/30 of one, so reading
 * members by id pays only while they are a small share of the contacts; 10,000 costs 100 requests and 10,000 RCU.
 */
export const MAX_READ_BY_ID = 10_000;

export const countDeadline = () => Date.now() + config.segmentCountBudgetMs;

interface Evaluator {
  id: string;
  /** Static: its members (their contacts read by id, or tested in the projection read past MAX_READ_BY_ID). */
  members?: Set<string>;
  test?: Predicate;
  /** Predicate of the v3 equivalent of legacy rules, counted beside to confirm the equivalence. */
  equivalent?: { filters: Filters; test: Predicate; count: number };
  count: number;
  matched?: ProjectedContact[];
}

/** The predicate of a segment's stored rules or membership; null when its rules are invalid. */
export async function segmentPredicate(bid: string, record: SegmentRecord, nowMs = Date.now()): Promise<Predicate | null> {
  if (record.segmentType === 'static') {
    const members = new Set(await listMemberIds(bid, record.id));
    return (c) => members.has(c.id);
  }
  const parsed = parseRules(record.rules);
  return parsed.ok ? compileCondition(rulesCondition(parsed, nowMs)) : null;
}

type CountOptions = { deadline?: number; collect?: string; store?: boolean };

/**
 * Dynamic segments are answered from their maintained counters (counters/); the projection scan below is left
 * for static segments and for a member list (`collect`) of a segment the counters do not serve.
 */
export async function countSegments(bid: string, records: SegmentRecord[], opts: CountOptions = {}): Promise<Map<string, CountOutcome>> {
  const maintained = records.filter((r) => r.segmentType === 'dynamic' && r.id !== opts.collect && parseRules(r.rules).ok);
  const counted = maintained.length > 0 ? await maintainedCounts(bid, maintained, opts.deadline) : new Map<string, MaintainedCount>();
  const rest = records.filter((r) => !counted.has(r.id));
  const out = rest.length > 0 ? await scanCounts(bid, rest, opts) : new Map<string, CountOutcome>();
  const countedAt = new Date().toISOString();
  const writes: Promise<void>[] = [];
  for (const r of maintained) {
    const m = counted.get(r.id);
    if (!m) continue;
    out.set(r.id, { count: m.count, stale: m.stale, filters: m.stale ? staticFilters(r) : maintainedFilters(r, m) });
    if (!m.stale && opts.store !== false && m.count !== r.contactCount) writes.push(storeCount(bid, r.id, m.count, countedAt));
  }
  await Promise.all(writes);
  return out;
}

/** v3 rules are their own filters; legacy rules show their v3 equivalent once both counted the same. */
function maintainedFilters(r: SegmentRecord, m: MaintainedCount): Filters | null {
  const parsed = parseRules(r.rules);
  if (!parsed.ok) return null;
  if (parsed.format === 'filters') return parsed.filters;
  return m.equivalent === m.count ? equivalentFilters(parsed) : null;
}

async function scanCounts(bid: string, records: SegmentRecord[], opts: CountOptions): Promise<Map<string, CountOutcome>> {
  const nowMs = Date.now();
  const out = new Map<string, CountOutcome>();
  const evaluators: Evaluator[] = [];

  await Promise.all(records.map(async (r) => {
    if (r.segmentType === 'static') {
      const members = new Set(await listMemberIds(bid, r.id));
      evaluators.push({ id: r.id, members, test: (c) => members.has(c.id), count: 0 });
      return;
    }
    const parsed = parseRules(r.rules);
    if (!parsed.ok) {
      out.set(r.id, { count: 0, stale: false, rulesError: parsed.error, filters: null });
      return;
    }
    const ev: Evaluator = { id: r.id, test: compileCondition(rulesCondition(parsed, nowMs)), count: 0 };
    const eq = equivalentFilters(parsed);
    if (eq && parsed.format === 'legacy') ev.equivalent = { filters: eq, test: compileCondition(filtersToCondition(eq, nowMs)), count: 0 };
    evaluators.push(ev);
  }));

  const collecting = evaluators.find((e) => e.id === opts.collect);
  if (collecting) collecting.matched = [];
  const visit = (among: Evaluator[]) => (c: ProjectedContact) => {
    for (const ev of among) {
      if (ev.test!(c)) {
        ev.count++;
        ev.matched?.push(c);
      }
      if (ev.equivalent?.test(c)) ev.equivalent.count++;
    }
  };
  const memberIds = new Set(evaluators.flatMap((ev) => [...(ev.members ?? [])]));
  const byId = memberIds.size <= MAX_READ_BY_ID;
  const byMembers = byId ? evaluators.filter((ev) => ev.members) : [];
  const byScan = evaluators.filter((ev) => !byMembers.includes(ev));

  try {
    await Promise.all([
      byMembers.length > 0 ? readActiveMembers(bid, [...memberIds], opts.deadline, visit(byMembers)) : undefined,
      byScan.length > 0 ? scanProjection(bid, { deadline: opts.deadline, onContact: visit(byScan) }) : undefined,
    ]);
  } catch (err) {
    if (!(err instanceof ScanDeadlineExceeded)) throw err;
    for (const r of records) {
      if (!out.has(r.id)) out.set(r.id, { count: r.contactCount, stale: true, filters: r.segmentType === 'static' ? null : staticFilters(r) });
    }
    return out;
  }

  const countedAt = new Date().toISOString();
  const writes: Promise<void>[] = [];
  for (const ev of evaluators) {
    const record = records.find((r) => r.id === ev.id)!;
    let filters: Filters | null = null;
    if (record.segmentType === 'dynamic') {
      const parsed = parseRules(record.rules);
      if (parsed.ok && parsed.format === 'filters') filters = parsed.filters;
      else if (ev.equivalent && ev.equivalent.count === ev.count) filters = ev.equivalent.filters;
    }
    out.set(ev.id, { count: ev.count, stale: false, filters, matched: ev.matched?.sort(byCreatedDesc) });
    if (opts.store !== false && ev.count !== record.contactCount) writes.push(storeCount(bid, ev.id, ev.count, countedAt));
  }
  await Promise.all(writes);
  return out;
}

/** Reads contacts by id and visits those still active; ScanDeadlineExceeded when the budget runs out first. */
async function readActiveMembers(bid: string, ids: string[], deadline: number | undefined, onContact: (c: ProjectedContact) => void): Promise<void> {
  const limit = pLimit(MEMBER_GROUPS_AT_ONCE);
  await Promise.all(Array.from({ length: Math.ceil(ids.length / MEMBER_GROUP) }, (_, i) => limit(async () => {
    if (deadline !== undefined && Date.now() >= deadline) throw new ScanDeadlineExceeded();
    const contacts = await batchGetContacts(bid, ids.slice(i * MEMBER_GROUP, (i + 1) * MEMBER_GROUP));
    for (const { contact } of contacts.values()) if (!contact.deleted_at) onContact(projectContact(contact));
  })));
}

/** Filters that need no count to be shown: v3 rules are their own filters. */
const staticFilters = (r: SegmentRecord): Filters | null => {
  const parsed = parseRules(r.rules);
  return parsed.ok && parsed.format === 'filters' ? parsed.filters : null;
};

export async function countSegment(bid: string, record: SegmentRecord, opts: { deadline?: number; collect?: boolean } = {}): Promise<CountOutcome> {
  const res = await countSegments(bid, [record], { deadline: opts.deadline, collect: opts.collect ? record.id : undefined });
  return res.get(record.id)!;
}
