/**
 * Bulk contact operations: each operation's reads and the unit of work of each contact. Reads are batched
 * (BatchGetItem), writes are grouped (`bulk-groups.ts`) into TransactWriteItems of up to 100 items (each
 * contact's write, its phone claim or release, its event in the outbox, and one counter item per stage touched),
 * so 100 contacts cost a handful of requests instead of hundreds.
 *
 * A group is all-or-nothing; when one is cancelled (a number claimed meanwhile, a contact edited meanwhile),
 * its contacts are redone one by one through the single-contact service, which re-reads, retries lost races
 * and gives each contact its own result. Contacts that repeat a phone number (or id) of the same request also
 * take that path, so the second one gets `duplicate_contact` naming the first, and so do items that set an
 * agent, a funnel stage or (on update) a phone number: their conversations, counters and claims are the
 * single-contact service's.
 */
import { closeConversationsOf } from '#shared/conversations/close.ts';
import * as v from 'valibot';
import { notFound, validationError } from '#shared/http/errors.ts';
import { UUID_RE } from '#shared/http/schemas.ts';
import { summarize, toFieldErrors } from '#shared/http/validation.ts';
import { listStages } from '#shared/funnel/repository.ts';
import { contactStageChanged } from '#shared/funnel/events.ts';
import { moveContact } from '#shared/funnel/move.ts';
import { missingRecord, ownerPut } from '#shared/auth/ownership.ts';
import type { Contact } from './model.ts';
import { internationalPhone } from './phone.ts';
import { batchGetContacts, batchGetPhoneClaims, contactPut, newContact, identityReleases, phoneClaim, type StoredContact } from './repository.ts';
import { changedFields, contactCreated, contactDeleted, contactUpdated } from './events.ts';
import { applyFieldPatch, createContact, deleteContact, invalidPhone, updateContact, type FieldPatch } from './service.ts';
import { dedupeTags, type UpdateContactInput } from './schemas.ts';
import { bulkCreateItem, bulkUpdateItem, listOf, needsSingleContactPath, type BulkBody, type BulkOperation } from './bulk-schemas.ts';
import { fail, itemError, writeGroups, type BulkItemResult, type Unit } from './bulk-groups.ts';

export interface BulkResult {
  operation: BulkOperation;
  success_count: number;
  error_count: number;
  results: BulkItemResult[];
}

export async function runBulk(bid: string, body: BulkBody): Promise<BulkResult> {
  const op = body.operation;
  const list = listOf(op);
  const input = list === 'contacts' ? body.contacts : body.contact_ids;
  if (!input) throw validationError({ [list]: [`is required for ${op}`] }, `${list} is required for ${op}`);
  if ((op === 'add_tags' || op === 'remove_tags') && !body.tags) throw validationError({ tags: [`is required for ${op}`] }, `tags is required for ${op}`);
  if (op === 'set_funnel_stage' && body.funnel_stage_id === undefined) {
    throw validationError({ funnel_stage_id: ['is required for set_funnel_stage (a stage id, or null for no stage)'] }, 'funnel_stage_id is required');
  }

  const results: BulkItemResult[] = new Array(input.length);
  if (op === 'create') await bulkCreate(bid, input as unknown[], results);
  else if (op === 'update') await bulkUpdate(bid, input as unknown[], results);
  else await bulkById(bid, op, input as string[], body, results);

  const success = results.filter((r) => r.success).length;
  return { operation: op, success_count: success, error_count: results.length - success, results };
}

async function bulkCreate(bid: string, input: unknown[], results: BulkItemResult[]): Promise<void> {
  const valid: { index: number; phone: string; fields: v.InferOutput<typeof bulkCreateItem> }[] = [];
  input.forEach((raw, index) => {
    const phoneRaw = (raw as any)?.phone_number;
    // Every create result names its phone number (the contract's item shape): as given, or null when none was.
    const shown = { phone_number: typeof phoneRaw === 'string' ? phoneRaw : null };
    const parsed = v.safeParse(bulkCreateItem, raw);
    if (!parsed.success) {
      const details = toFieldErrors(parsed.issues);
      results[index] = details.phone_number
        ? fail(null, 'invalid_phone_number', details.phone_number[0], shown)
        : fail(null, 'create_failed', summarize(details), shown);
      return;
    }
    const phone = internationalPhone(parsed.output.phone_number);
    // The single create's refusal, as an item (one wording for both).
    if (!phone) results[index] = itemError('create', null, invalidPhone(), shown);
    else valid.push({ index, phone, fields: parsed.output });
  });

  const claims = await batchGetPhoneClaims(bid, valid.map((x) => x.phone));
  const seen = new Set<string>();
  const units: Unit[] = [];
  const later: typeof valid = [];
  for (const x of valid) {
    const existing = claims.get(x.phone);
    if (existing) {
      results[x.index] = fail(null, 'duplicate_contact', 'A contact with this phone number already exists', { phone_number: x.phone, existing_contact_id: existing });
      continue;
    }
    // A repeated number, or an item with an agent or a stage, goes alone, in request order.
    if (seen.has(x.phone) || needsSingleContactPath(x.fields, true)) {
      seen.add(x.phone);
      later.push(x);
      continue;
    }
    seen.add(x.phone);
    const contact = newContact({
      phone_number: x.phone,
      name: x.fields.name || null,
      email: x.fields.email || null,
      tags: dedupeTags(x.fields.tags ?? []),
      custom_fields: Object.fromEntries(Object.entries(x.fields.custom_fields ?? {}).filter(([, val]) => val !== null)),
      opted_out: x.fields.opted_out ?? false,
      origin: 'bulk',
    });
    units.push({
      index: x.index,
      items: [contactPut(bid, contact, null), phoneClaim(bid, x.phone, contact.id), ownerPut('contact', contact.id, bid)],
      events: [contactCreated(bid, contact)],
      done: { success: true, contact_id: contact.id, phone_number: x.phone },
      alone: () => createAlone(bid, x.phone, x.fields),
    });
  }
  await writeGroups(bid, units, results, true);
  for (const x of later) results[x.index] = await createAlone(bid, x.phone, x.fields);
}

async function createAlone(bid: string, phone: string, fields: v.InferOutput<typeof bulkCreateItem>): Promise<BulkItemResult> {
  try {
    const c = await createContact(bid, { ...fields, phone_number: phone, origin: 'bulk' });
    return { success: true, contact_id: c.id, phone_number: phone };
  } catch (err) {
    return itemError('create', null, err, { phone_number: phone });
  }
}

const live = (s: StoredContact | undefined): s is StoredContact => s !== undefined && !s.contact.deleted_at;

/** A unit that writes the patched contact over `stored` (succeeding without a write when nothing changes, failing the item past a limit). */
function fieldUnit(bid: string, index: number, stored: StoredContact, op: BulkOperation, patch: FieldPatch, alone: () => Promise<BulkItemResult>): Unit | BulkItemResult {
  let next: Contact;
  try {
    next = applyFieldPatch(stored.contact, patch);
  } catch (err) {
    return itemError(op, stored.contact.id, err);
  }
  const changed = changedFields(stored.contact, next);
  if (changed.length === 0) return { success: true, contact_id: next.id };
  next.updated_at = new Date().toISOString();
  return {
    index,
    items: [contactPut(bid, next, stored.version, stored.contact)],
    events: [contactUpdated(bid, next, changed)],
    done: { success: true, contact_id: next.id },
    alone,
  };
}

async function bulkUpdate(bid: string, input: unknown[], results: BulkItemResult[]): Promise<void> {
  const valid: { index: number; id: string; patch: UpdateContactInput }[] = [];
  input.forEach((raw, index) => {
    const parsed = v.safeParse(bulkUpdateItem, raw);
    const id = typeof (raw as any)?.id === 'string' ? (raw as any).id : null;
    if (!parsed.success) {
      const details = toFieldErrors(parsed.issues);
      results[index] = details.id ? fail(id, 'not_found', 'Contact not found') : fail(id, 'update_failed', summarize(details));
      return;
    }
    const { id: cid, ...patch } = parsed.output;
    valid.push({ index, id: cid.toLowerCase(), patch });
  });
  const stored = await batchGetContacts(bid, valid.map((x) => x.id));
  const units: Unit[] = [];
  const seen = new Set<string>();
  const later: typeof valid = [];
  for (const x of valid) {
    const s = stored.get(x.id);
    if (!live(s)) {
      results[x.index] = fail(x.id, 'not_found', 'Contact not found');
      continue;
    }
    // The same contact twice (the second change applies on top of the first), or a change of number, agent or
    // stage: alone, in request order.
    if (seen.has(x.id) || needsSingleContactPath(x.patch, false)) {
      seen.add(x.id);
      later.push(x);
      continue;
    }
    seen.add(x.id);
    const alone = () => updateContact(bid, x.id, x.patch).then((c) => ({ success: true, contact_id: c.id }), (err) => itemError('update', x.id, err));
    const unit = fieldUnit(bid, x.index, s, 'update', x.patch, alone);
    if ('items' in unit) units.push(unit);
    else results[x.index] = unit;
  }
  await writeGroups(bid, units, results, true);
  for (const x of later) {
    results[x.index] = await updateContact(bid, x.id, x.patch).then((c) => ({ success: true, contact_id: c.id }), (err) => itemError('update', x.id, err));
  }
}

async function bulkById(bid: string, op: Exclude<BulkOperation, 'create' | 'update'>, ids: string[], body: BulkBody, results: BulkItemResult[]): Promise<void> {
  const stageId = body.funnel_stage_id ?? null;
  const stages = op === 'set_funnel_stage' || op === 'delete' ? new Map((await listStages(bid, true)).map((s) => [s.id, s])) : new Map();
  if (op === 'set_funnel_stage' && stageId && !stages.has(stageId)) throw await missingRecord('stage', stageId, bid, notFound('Funnel stage not found'));
  const target = stageId ? stages.get(stageId) : undefined;

  const wellFormed = ids.map((id) => (UUID_RE.test(id) ? id.toLowerCase() : null));
  const stored = await batchGetContacts(bid, wellFormed.filter((id): id is string => id !== null));
  const units: Unit[] = [];
  const seen = new Set<string>();
  for (const [index, id] of wellFormed.entries()) {
    const s = id ? stored.get(id) : undefined;
    if (!id || !live(s)) {
      results[index] = fail(ids[index], 'not_found', 'Contact not found');
      continue;
    }
    // A repeated id is one contact: it gets the first one's outcome.
    if (seen.has(id)) {
      results[index] = { success: true, contact_id: id };
      continue;
    }
    seen.add(id);
    const c = s.contact;
    const ok: BulkItemResult = { success: true, contact_id: id };
    const single = (work: () => Promise<unknown>) => () => work().then(() => ok, (err) => itemError(op, id, err));

    if (op === 'add_tags' || op === 'remove_tags') {
      const patch: FieldPatch = op === 'add_tags' ? { add_tags: body.tags } : { remove_tags: body.tags };
      const unit = fieldUnit(bid, index, s, op, patch, single(() => updateContact(bid, id, patch)));
      if ('items' in unit) units.push(unit);
      else results[index] = unit;
    } else if (op === 'delete') {
      const now = new Date().toISOString();
      const next: Contact = { ...c, deleted_at: now, updated_at: now };
      const from = c.funnel_stage_id && stages.has(c.funnel_stage_id) ? c.funnel_stage_id : null;
      units.push({
        index,
        items: [contactPut(bid, next, s.version, c), ...identityReleases(bid, c)],
        events: [contactDeleted(bid, next)],
        move: { from, to: null },
        done: ok,
        alone: single(() => deleteContact(bid, id)),
      });
    } else {
      if (c.funnel_stage_id === stageId) {
        results[index] = ok;
        continue;
      }
      const now = new Date().toISOString();
      const next: Contact = { ...c, funnel_stage_id: stageId, updated_at: now };
      const fromStage = c.funnel_stage_id ? stages.get(c.funnel_stage_id) : undefined;
      units.push({
        index,
        items: [contactPut(bid, next, s.version, c)],
        events: [contactStageChanged(bid, next, fromStage ? { id: fromStage.id, name: fromStage.name } : null, target ? { id: target.id, name: target.name } : null, now)],
        move: { from: fromStage ? fromStage.id : null, to: stageId },
        done: ok,
        alone: single(() => moveContact(bid, id, stageId)),
      });
    }
  }
  await writeGroups(bid, units, results, units.every((u) => !u.move || u.move.from === u.move.to));
  if (op === 'delete') await closeConversationsOf(bid, units.filter((u) => results[u.index]?.success).map((u) => results[u.index].contact_id!));
}
