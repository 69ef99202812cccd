/**
 * The contact rules: E.164 phone numbers unique per business, validated emails, deduplicated tags,
 * custom fields of scalars, soft delete (which closes the contact's open conversation), agent assignment through the open conversation, exact stage
 * counts, and the contact events, each written in the transaction of the change it reports.
 */
import { closeConversationsOf } from '#shared/conversations/close.ts';
import { commit, type DomainEvent, type TransactItem } from '#shared/events/outbox.ts';
import { conflict, notFound, validationError } from '#shared/http/errors.ts';
import { decodeCursor, encodeCursor } from '#shared/http/cursor.ts';
import { keys } from '#shared/store/keys.ts';
import { getStage, stageCountItems } from '#shared/funnel/repository.ts';
import { contactStageChanged } from '#shared/funnel/events.ts';
import type { Contact } from './model.ts';
import { internationalPhone, PHONE_FORMAT } from './phone.ts';
import { contactPut, findContactIdByPhone, getStoredContact, identityReleases, newContact, phoneClaim, phoneRelease, queryContactItems } from './repository.ts';
import { changedFields, contactCreated, contactDeleted, contactUpdated } from './events.ts';
import { assertAgentOfBusiness, assignmentChange } from './assignment.ts';
import { cancellationCodes, optimistic, RetryableConflict } from '#shared/store/transact.ts';
import { contactDataBytes, dedupeTags, MAX_CONTACT_DATA_BYTES, MAX_CUSTOM_FIELDS, MAX_TAGS, tooLargeMessage, type CreateContactInput, type UpdateContactInput } from './schemas.ts';
import { contactMatcher } from './search.ts';
import { missingRecord, ownerPut } from '#shared/auth/ownership.ts';

export const contactNotFound = () => notFound('Contact not found');

export const invalidPhone = () =>
  validationError({ phone_number: [PHONE_FORMAT] }, 'Invalid phone_number');

export const duplicateContact = (existingId: string) =>
  conflict('duplicate_contact', 'A contact with this phone number already exists', { existing_contact_id: existingId });

/** A stage id of no stage (another account's is 403, as everywhere). */
const unknownStage = () => validationError({ funnel_stage_id: ['No funnel stage with this id in your funnel'] }, 'Unknown funnel_stage_id');

const dropNulls = (o: Record<string, string | number | boolean | null>) => Object.fromEntries(Object.entries(o).filter(([, val]) => val !== null));

/** Items of a transaction with labels, so that a cancellation can say which condition failed. */
class Tx {
  items: TransactItem[] = [];
  labels: string[] = [];
  add(label: string, ...items: TransactItem[]) {
    for (const it of items) {
      this.items.push(it);
      this.labels.push(label);
    }
  }
  failed(err: unknown): Set<string> | undefined {
    const codes = cancellationCodes(err);
    if (!codes) return undefined;
    return new Set(codes.flatMap((c, i) => (c === 'ConditionalCheckFailed' ? [this.labels[i]] : [])));
  }
}

export async function createContact(bid: string, input: CreateContactInput): Promise<Contact> {
  const phone = internationalPhone(input.phone_number);
  if (!phone) throw invalidPhone();
  if (input.assigned_agent_id) await assertAgentOfBusiness(bid, input.assigned_agent_id);
  if (input.funnel_stage_id && !(await getStage(bid, input.funnel_stage_id))) throw await missingRecord('stage', input.funnel_stage_id, bid, unknownStage());
  return optimistic(async () => {
    const existing = await findContactIdByPhone(bid, phone);
    if (existing) throw duplicateContact(existing);
    const contact = newContact({
      phone_number: phone,
      name: input.name || null,
      email: input.email || null,
      tags: dedupeTags(input.tags ?? []),
      custom_fields: dropNulls(input.custom_fields ?? {}),
      assigned_agent_id: input.assigned_agent_id ?? null,
      funnel_stage_id: input.funnel_stage_id ?? null,
      opted_out: input.opted_out ?? false,
      origin: input.origin ?? 'api',
    });
    const tx = new Tx();
    tx.add('contact', contactPut(bid, contact, null));
    tx.add('phone', phoneClaim(bid, phone, contact.id));
    tx.add('owner', ownerPut('contact', contact.id, bid));
    tx.add('stage', ...stageCountItems(bid, [{ from: null, to: contact.funnel_stage_id }]).items);
    try {
      await commit(tx.items, [contactCreated(bid, contact)]);
    } catch (err) {
      const failed = tx.failed(err);
      if (!failed) throw err;
      if (failed.has('stage')) throw unknownStage();
      // A concurrent create won the number: the next attempt answers 409 with its id.
      throw new RetryableConflict();
    }
    return contact;
  });
}

export async function getContactOrFail(bid: string, id: string): Promise<Contact> {
  const stored = await getStoredContact(bid, id);
  if (!stored || stored.contact.deleted_at) throw await missingRecord('contact', id, bid, contactNotFound());
  return stored.contact;
}

export type FieldPatch = Pick<UpdateContactInput, 'name' | 'email' | 'opted_out' | 'tags' | 'add_tags' | 'remove_tags' | 'custom_fields'>;

/** The plain field changes (no phone, stage or agent: those need items of their own). */
export function applyFieldPatch(before: Contact, patch: FieldPatch): Contact {
  const next: Contact = { ...before, tags: [...before.tags], custom_fields: { ...before.custom_fields } };
  if (patch.name !== undefined) next.name = patch.name || null;
  if (patch.email !== undefined) next.email = patch.email || null;
  if (patch.opted_out !== undefined) next.opted_out = patch.opted_out;
  if (patch.tags !== undefined) next.tags = dedupeTags(patch.tags);
  if (patch.add_tags) next.tags = dedupeTags([...next.tags, ...patch.add_tags]);
  if (patch.remove_tags) {
    const drop = new Set(patch.remove_tags.map((t) => t.toLowerCase()));
    next.tags = next.tags.filter((t) => !drop.has(t.toLowerCase()));
  }
  if (patch.custom_fields) next.custom_fields = dropNulls({ ...next.custom_fields, ...patch.custom_fields });
  assertWithinLimits(before, next, patch);
  return next;
}

/**
 * A contact holds at most as many tags and custom fields as one request may set, so that its own can always be sent
 * back, and at most MAX_CONTACT_DATA_BYTES of data: a change that adds to them (`add_tags`, merged fields, longer
 * values) may not take it past that (400 naming the field).
 */
function assertWithinLimits(before: Contact, next: Contact, patch: FieldPatch): void {
  const tags = next.tags.length;
  if (tags > MAX_TAGS && tags > before.tags.length) {
    const field = patch.add_tags ? 'add_tags' : 'tags';
    throw validationError({ [field]: [`would give the contact ${tags} tags; a contact has at most ${MAX_TAGS}`] }, `Invalid body: a contact has at most ${MAX_TAGS} tags`);
  }
  const fields = Object.keys(next.custom_fields).length;
  if (fields > MAX_CUSTOM_FIELDS && fields > Object.keys(before.custom_fields).length) {
    throw validationError({ custom_fields: [`would give the contact ${fields} custom fields; a contact has at most ${MAX_CUSTOM_FIELDS}`] }, `Invalid body: a contact has at most ${MAX_CUSTOM_FIELDS} custom fields`);
  }
  const bytes = contactDataBytes(next);
  if (bytes > MAX_CONTACT_DATA_BYTES && bytes > contactDataBytes(before)) {
    throw validationError({ custom_fields: [tooLargeMessage(bytes)] }, `Invalid body: ${tooLargeMessage(bytes)}`);
  }
}

export async function updateContact(bid: string, id: string, patch: UpdateContactInput): Promise<Contact> {
  let phone: string | undefined;
  if (patch.phone_number !== undefined) {
    phone = internationalPhone(patch.phone_number) ?? undefined;
    if (!phone) throw invalidPhone();
  }
  if (patch.assigned_agent_id) await assertAgentOfBusiness(bid, patch.assigned_agent_id);
  if (patch.funnel_stage_id && !(await getStage(bid, patch.funnel_stage_id))) throw await missingRecord('stage', patch.funnel_stage_id, bid, unknownStage());

  let renumbered = false;
  const updated = await optimistic(async () => {
    const stored = await getStoredContact(bid, id);
    if (!stored || stored.contact.deleted_at) throw await missingRecord('contact', id, bid, contactNotFound());
    const before = stored.contact;
    const next = applyFieldPatch(before, patch);
    if (phone !== undefined) next.phone_number = phone;
    if (patch.assigned_agent_id !== undefined) next.assigned_agent_id = patch.assigned_agent_id;
    if (patch.funnel_stage_id !== undefined) next.funnel_stage_id = patch.funnel_stage_id;

    // Sent explicitly: the open conversation follows even when the contact already named this agent.
    const assignment = patch.assigned_agent_id !== undefined ? await assignmentChange(bid, id, patch.assigned_agent_id) : { items: [], events: [] };
    const changed = changedFields(before, next);
    if (changed.length === 0 && assignment.events.length === 0) return before;
    next.updated_at = new Date().toISOString();

    const tx = new Tx();
    tx.add('contact', contactPut(bid, next, stored.version, stored.contact));
    const newPhone = phone !== undefined && phone !== before.phone_number ? phone : undefined;
    if (newPhone) {
      tx.add('phone', phoneClaim(bid, newPhone, id));
      // A customer known by username only has no number to release: their user id stays theirs.
      if (before.phone_number) tx.add('oldPhone', phoneRelease(bid, before.phone_number, id));
    }
    const events: DomainEvent[] = [];
    if (changed.length > 0) events.push(contactUpdated(bid, next, changed));
    if (next.funnel_stage_id !== before.funnel_stage_id) {
      const [from, to] = await Promise.all([
        before.funnel_stage_id ? getStage(bid, before.funnel_stage_id) : undefined,
        next.funnel_stage_id ? getStage(bid, next.funnel_stage_id) : undefined,
      ]);
      if (next.funnel_stage_id && !to) throw unknownStage();
      for (const item of stageCountItems(bid, [{ from: from ? from.id : null, to: next.funnel_stage_id }]).items) tx.add(item.Update?.ExpressionAttributeValues?.[':d'] === 1 ? 'stageIn' : 'stageOut', item);
      events.push(contactStageChanged(bid, next, from ? { id: from.id, name: from.name } : null, to ? { id: to.id, name: to.name } : null, next.updated_at));
    }
    tx.add('assignment', ...assignment.items);
    events.push(...assignment.events);
    try {
      await commit(tx.items, events);
    } catch (err) {
      const failed = tx.failed(err);
      if (!failed) throw err;
      if (failed.has('phone') && newPhone) {
        const owner = await findContactIdByPhone(bid, newPhone);
        if (owner && owner !== id) throw duplicateContact(owner);
      }
      if (failed.has('stageIn')) throw unknownStage();
      throw new RetryableConflict();
    }
    renumbered = newPhone !== undefined && before.phone_number !== null;
    return next;
  });
  // A chat is with a number: the open conversation stays the old number's (its window too), so it is closed, and the
  // new number's next message opens the contact's next one (else replies, the AI's too, went to the old number).
  if (renumbered) await closeConversationsOf(bid, [id.toLowerCase()]);
  return updated;
}

export async function deleteContact(bid: string, id: string): Promise<void> {
  await optimistic(async () => {
    const stored = await getStoredContact(bid, id);
    if (!stored || stored.contact.deleted_at) throw await missingRecord('contact', id, bid, contactNotFound());
    const now = new Date().toISOString();
    const next: Contact = { ...stored.contact, deleted_at: now, updated_at: now };
    const from = stored.contact.funnel_stage_id ? await getStage(bid, stored.contact.funnel_stage_id) : undefined;
    // A deleted contact is in no count: it leaves its stage's counter (its record keeps the stage id as history).
    const items = [
      contactPut(bid, next, stored.version, stored.contact),
      ...identityReleases(bid, stored.contact),
      ...stageCountItems(bid, [{ from: from ? from.id : null, to: null }]).items,
    ];
    await commit(items, [contactDeleted(bid, next)]).catch((err) => {
      if (cancellationCodes(err)) throw new RetryableConflict();
      throw err;
    });
  });
  await closeConversationsOf(bid, [id.toLowerCase()]);
}

export interface ListContactsInput {
  limit: number;
  cursor?: string;
  search?: string;
  filters?: string;
}

/** Pages scanned per request when a filter skips most contacts; past it the cursor resumes the scan. */
const MAX_FILTERED_ITEMS_SCANNED = 20_000;

export async function listContacts(bid: string, input: ListContactsInput): Promise<{ contacts: Contact[]; next_cursor: string | null }> {
  const { pk, skPrefix } = keys.contactPrefix(bid);
  let key: Record<string, unknown> | undefined = decodeCursor(input.cursor, { pk, sk: { prefix: skPrefix } });
  const matches = contactMatcher(input.filters, input.search);
  const contacts: Contact[] = [];
  let scanned = 0;
  for (;;) {
    const want = matches ? 500 : input.limit - contacts.length + 1;
    const { items, lastKey } = await queryContactItems(bid, key, want);
    scanned += items.length;
    for (const c of items) {
      if (c.deleted_at || (matches && !matches(c))) continue;
      if (contacts.length === input.limit) {
        const last = contacts[contacts.length - 1];
        return { contacts, next_cursor: encodeCursor(keys.contact(bid, last.id)) };
      }
      contacts.push(c);
    }
    if (!lastKey) return { contacts, next_cursor: null };
    key = lastKey;
    if (scanned >= MAX_FILTERED_ITEMS_SCANNED) return { contacts, next_cursor: encodeCursor(lastKey) };
  }
}

