/**
 * Static membership: bulk add/remove (`POST /segments/{id}/members`), add by id (`POST /segments/{id}/contacts`)
 * and remove one (`DELETE /segments/{id}/contacts/{contactId}`).
 *
 * Idempotent by construction: each change is a conditional write (add: the member item must not exist;
 * remove: it must exist), and `affected` counts only the writes whose condition held, so a repeated or
 * concurrent identical request changes and counts nothing the second time.
 */
import pLimit from 'p-limit';
import * as v from 'valibot';
import { batchGetContacts } from '#shared/contacts/repository.ts';
import { validateFilters, type Filters } from '#shared/contacts/filters/filters.ts';
import { compileCondition, referencedSegments, type Predicate } from '#shared/contacts/filters/predicate.ts';
import { selectionCondition } from '#shared/contacts/filters/compile.ts';
import { byCreatedDesc, selectMatching } from '#shared/contacts/filters/scan.ts';
import { sampleMatching } from './sample.ts';
import { notFound } from '#shared/http/errors.ts';
import { UUID_RE } from '#shared/http/schemas.ts';
import { countDeadline, countSegment, segmentPredicate } from './count.ts';
import { addMember, getSegment, listMemberIds, removeMember, type SegmentRecord } from './repository.ts';
import { invalidData, issuesToDetails, ruleInvalid, selectWithinBudget, toDetails } from './errors.ts';
import { ruleError } from './rules.ts';
import { loadSegment } from './service.ts';
import { membersBody, MAX_CONTACT_IDS } from './schemas.ts';

export const MAX_SELECTION = 50_000;
/** `contactIds` is part of the reply only up to this many affected contacts. */
export const MAX_REPORTED_IDS = 10_000;
const WRITE_PARALLELISM = 16;

export interface MembersResult {
  action: 'add' | 'remove';
  affected: number;
  contactIds?: string[];
  contactCount: number;
  countStale: boolean;
}

const requireStatic = (record: SegmentRecord) => {
  if (record.segmentType !== 'static') {
    throw ruleInvalid('Members can only be changed on a static segment; this segment is dynamic and its members follow its rules. Use a static segment, or change this segment\'s rules.');
  }
};

/** Every id must be a contact of the business (active or soft-deleted); otherwise nothing is applied. */
async function checkIdsExist(bid: string, ids: string[]): Promise<Map<string, boolean>> {
  const found = await batchGetContacts(bid, ids);
  const unknown = ids.filter((id) => !found.has(id));
  if (unknown.length > 0) {
    throw ruleInvalid(
      `${unknown.length} contact id(s) do not exist in this business: ${unknown.slice(0, 20).join(', ')}${unknown.length > 20 ? ', ...' : ''}. Nothing was applied; remove them and retry.`,
      { unknownContactIds: unknown.slice(0, 1000) },
    );
  }
  return new Map(ids.map((id) => [id, !found.get(id)!.contact.deleted_at]));
}

/** Applies the changes with conditional writes; returns the ids that really changed. */
async function apply(bid: string, segmentId: string, action: 'add' | 'remove', candidates: string[]): Promise<string[]> {
  const existing = new Set(await listMemberIds(bid, segmentId));
  // Skip what is already in the wanted state; the conditional writes still guard against concurrent requests.
  const todo = candidates.filter((id) => (action === 'add' ? !existing.has(id) : existing.has(id)));
  const limit = pLimit(WRITE_PARALLELISM);
  const at = new Date().toISOString();
  const changed = await Promise.all(todo.map((id) => limit(() => (action === 'add' ? addMember(bid, segmentId, id, at) : removeMember(bid, segmentId, id)))));
  return todo.filter((_, i) => changed[i]);
}

async function result(bid: string, record: SegmentRecord, action: 'add' | 'remove', changed: string[], deadline: number): Promise<MembersResult> {
  const outcome = await countSegment(bid, record, { deadline });
  return {
    action,
    affected: changed.length,
    ...(changed.length <= MAX_REPORTED_IDS ? { contactIds: changed } : {}),
    contactCount: outcome.count,
    countStale: outcome.stale,
  };
}

/** The membership test of each `segment_id` named in member-selection filters (400 when one is not in the business). */
async function segmentMembership(bid: string, filters: Filters | undefined): Promise<(id: string) => Predicate> {
  const ids = filters ? [...referencedSegments(selectionCondition({ filters }))] : [];
  const predicates = new Map<string, Predicate>();
  for (const id of ids) {
    const record = await getSegment(bid, id);
    if (!record) throw ruleInvalid(ruleError(`Invalid filters: filters.segment_id: segment ${id} does not exist in this business`), { details: [{ field: 'filters.segment_id', message: 'segment not found' }] });
    predicates.set(id, (await segmentPredicate(bid, record)) ?? (() => false));
  }
  return (id) => predicates.get(id.toLowerCase()) ?? (() => false);
}

export async function changeMembers(bid: string, segmentId: unknown, body: unknown): Promise<MembersResult> {
  // One time budget for every projection read of the request (the selection and the count after the change).
  const deadline = countDeadline();
  const record = await loadSegment(bid, segmentId);
  const parsed = v.safeParse(membersBody, body);
  if (!parsed.success) throw invalidData(issuesToDetails(parsed.issues));
  const input = parsed.output;
  const byIds = input.contactIds !== undefined;
  const bySelection = input.search !== undefined || input.filters !== undefined;
  if (byIds && bySelection) throw invalidData([{ field: '_body', message: 'send either contactIds or a search selection (search and/or filters), not both' }]);
  if (!byIds && !bySelection) throw invalidData([{ field: '_body', message: 'send contactIds or a search selection (search and/or filters); there is no implicit "all contacts"' }]);
  requireStatic(record);

  if (byIds) {
    const ids = [...new Set(input.contactIds!.map((id) => id.toLowerCase()))];
    const active = await checkIdsExist(bid, ids);
    const candidates = input.action === 'add' ? ids.filter((id) => active.get(id)) : ids;
    return result(bid, record, input.action, await apply(bid, record.id, input.action, candidates), deadline);
  }

  let filters: Filters | undefined;
  if (input.filters !== undefined) {
    const checked = validateFilters(input.filters, { allowSegmentId: true, path: 'filters' });
    if (!checked.ok) throw ruleInvalid(ruleError(`Invalid filters: ${checked.errors.join('; ')}`), { details: toDetails(checked.errors) });
    filters = checked.value;
  }
  const predicate = compileCondition(selectionCondition({ filters, search: input.search }), { segmentMembers: await segmentMembership(bid, filters) });
  const selected = await selectWithinBudget(() => selectContacts(bid, predicate, deadline));
  assertSelectionSize(selected.length);
  return result(bid, record, input.action, await apply(bid, record.id, input.action, selected), deadline);
}

/**
 * Ids of the contacts a selection matches. A sample of 1,000 contacts per id range comes first: a business that
 * small is answered by it, and a selection the sample shows to be far over the cap is refused at once, without
 * reading the rest; otherwise every contact is read (the projection scan).
 */
async function selectContacts(bid: string, predicate: Predicate, deadline: number): Promise<string[]> {
  const sample = await sampleMatching(bid, predicate, 1, deadline);
  if (sample.complete) return sample.matched.sort(byCreatedDesc).map((c) => c.id);
  if (sample.atLeast > MAX_SELECTION) {
    throw ruleInvalid(`The selection matches about ${sample.estimate} contacts (estimated from a sample; more than ${sample.atLeast} for certain); at most ${MAX_SELECTION} can be changed at once. Narrow the search or filters and retry.`, { selected: sample.estimate, estimated: true, max: MAX_SELECTION });
  }
  return selectMatching(bid, predicate, { deadline });
}

/** A search selection may change at most MAX_SELECTION contacts at once (400 beyond). */
export function assertSelectionSize(selected: number): void {
  if (selected > MAX_SELECTION) {
    throw ruleInvalid(`The selection matches ${selected} contacts; at most ${MAX_SELECTION} can be changed at once. Narrow the search or filters and retry.`, { selected, max: MAX_SELECTION });
  }
}

/**
 * `POST /segments/{id}/contacts`: `{ contactIds }` (or `contact_ids`, or one `contactId` / `contact_id`: the
 * contract does not show this body), the same rules as a bulk add by ids.
 */
export async function addContacts(bid: string, segmentId: unknown, body: unknown): Promise<MembersResult> {
  const record = await loadSegment(bid, segmentId);
  const b = body as Record<string, unknown> | null;
  const one = (x: unknown) => (x === undefined ? undefined : [x]);
  const ids = b && typeof b === 'object' && !Array.isArray(b) ? (b.contactIds ?? b.contact_ids ?? one(b.contactId ?? b.contact_id)) : undefined;
  return changeMembers(bid, record.id, { action: 'add', contactIds: ids ?? [] });
}

export async function removeContact(bid: string, segmentId: unknown, contactId: unknown): Promise<MembersResult> {
  const record = await loadSegment(bid, segmentId);
  if (typeof contactId !== 'string' || !UUID_RE.test(contactId)) throw notFound('Contact not found in this segment');
  requireStatic(record);
  const removed = await removeMember(bid, record.id, contactId.toLowerCase());
  if (!removed) throw notFound('Contact not found in this segment');
  return result(bid, record, 'remove', [contactId.toLowerCase()], countDeadline());
}

export { MAX_CONTACT_IDS };
