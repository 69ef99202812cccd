/**
 * Contact items in the table.
 *
 * - `CONTACT#{id}`: the record, a `version` for optimistic concurrency, and (unless deleted) the filter
 *   projection `spk/ssk/proj` that segment counts read from the sparse `shard` index. Every write is a full Put
 *   conditioned on the version it read, so the projection always matches the record it was computed from.
 * - `CPHONE#{e164}`: the unique phone claim `{ contactId }`, created with `attribute_not_exists` in the same
 *   transaction as the contact; a soft delete releases it so the number can be used again.
 * - `CUSER#{userId}`: the same claim for a customer known only by their WhatsApp business-scoped user id (they
 *   wrote by username, without a number).
 * The two are a contact's identities: `identityClaims` and `identityReleases` write and free whichever it has.
 */
import { randomUUID } from 'node:crypto';
import { DeleteCommand, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';
import { batchGetAll } from '#shared/store/batch.ts';
import { commit, type TransactItem } from '#shared/events/outbox.ts';
import { projectionAttributes } from '#shared/contacts/filters/projection.ts';
import type { Contact } from './model.ts';
import { normalizePhone } from './phone.ts';
import { contactCreated, contactUpdated } from './events.ts';
import { cancellationCodes, optimistic, RetryableConflict } from '#shared/store/transact.ts';
import { ownerPut } from '#shared/auth/ownership.ts';
import { trackContactWrite } from '#shared/segments/counters/hook.ts';

export interface StoredContact {
  contact: Contact;
  version: number;
}

export const toContact = (item: Record<string, any>): Contact => ({
  id: item.id,
  phone_number: item.phone_number ?? null,
  ...(item.whatsapp_user_id ? { whatsapp_user_id: item.whatsapp_user_id as string } : {}),
  name: item.name ?? null,
  email: item.email ?? null,
  tags: item.tags ?? [],
  custom_fields: item.custom_fields ?? {},
  assigned_agent_id: item.assigned_agent_id ?? null,
  funnel_stage_id: item.funnel_stage_id ?? null,
  origin: item.origin ?? 'api',
  opted_out: Boolean(item.opted_out),
  created_at: item.created_at,
  updated_at: item.updated_at,
  last_contact_at: item.last_contact_at ?? null,
  deleted_at: item.deleted_at ?? null,
});

const toStored = (item: Record<string, any>): StoredContact => ({ contact: toContact(item), version: Number(item.version ?? 0) });

/** A new contact: the fields given, and for the rest the same defaults as a stored item without them. */
export const newContact = (fields: Partial<Contact>, now = new Date().toISOString()): Contact =>
  toContact({ ...fields, id: randomUUID(), created_at: now, updated_at: now, deleted_at: null });

/**
 * The Put of a contact record. `expectedVersion` null: a new item (must not exist); otherwise the write only
 * lands if nobody changed the record since it was read at that version.
 */
export function contactPut(bid: string, contact: Contact, expectedVersion: number | null, before: Contact | null = null): TransactItem {
  const version = (expectedVersion ?? 0) + 1;
  const index = contact.deleted_at ? {} : projectionAttributes(bid, contact);
  if (expectedVersion !== null && before === null) throw new Error('contactPut of an existing contact needs the record it replaces (segment counts)');
  return trackContactWrite(bid, before, contact, {
    Put: {
      TableName: table(),
      Item: { ...keys.contact(bid, contact.id), type: 'contact', businessId: bid, version, ...contact, ...index },
      ConditionExpression: expectedVersion === null ? 'attribute_not_exists(pk)' : '#v = :v',
      ...(expectedVersion === null ? {} : { ExpressionAttributeNames: { '#v': 'version' }, ExpressionAttributeValues: { ':v': expectedVersion } }),
    },
  });
}

export const phoneClaim = (bid: string, phone: string, contactId: string): TransactItem => ({
  Put: {
    TableName: table(),
    Item: { ...keys.contactPhone(bid, phone), type: 'contactPhone', contactId },
    ConditionExpression: 'attribute_not_exists(pk)',
  },
});

export const phoneRelease = (bid: string, phone: string, contactId: string): TransactItem => ({
  Delete: {
    TableName: table(),
    Key: keys.contactPhone(bid, phone),
    ConditionExpression: 'attribute_not_exists(pk) OR contactId = :id',
    ExpressionAttributeValues: { ':id': contactId },
  },
});

const userIdClaim = (bid: string, userId: string, contactId: string): TransactItem => ({
  Put: { TableName: table(), Item: { ...keys.contactUserId(bid, userId), type: 'contactUserId', contactId }, ConditionExpression: 'attribute_not_exists(pk)' },
});

const userIdRelease = (bid: string, userId: string, contactId: string): TransactItem => ({
  Delete: {
    TableName: table(),
    Key: keys.contactUserId(bid, userId),
    ConditionExpression: 'attribute_not_exists(pk) OR contactId = :id',
    ExpressionAttributeValues: { ':id': contactId },
  },
});

/** The claims of a new contact's identities (its phone number, or the user id of a customer known by username). */
export const identityClaims = (bid: string, c: Contact): TransactItem[] => [
  ...(c.phone_number ? [phoneClaim(bid, c.phone_number, c.id)] : []),
  ...(c.whatsapp_user_id ? [userIdClaim(bid, c.whatsapp_user_id, c.id)] : []),
];

/** Frees a deleted contact's identities, so that the number (or the user) can be a contact again. */
export const identityReleases = (bid: string, c: Contact): TransactItem[] => [
  ...(c.phone_number ? [phoneRelease(bid, c.phone_number, c.id)] : []),
  ...(c.whatsapp_user_id ? [userIdRelease(bid, c.whatsapp_user_id, c.id)] : []),
];

/** The record whatever its state (deleted included), with its version. */
export async function getStoredContact(bid: string, id: string): Promise<StoredContact | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: table(), Key: keys.contact(bid, id), ConsistentRead: true }));
  return Item ? toStored(Item) : undefined;
}

/** A live (not deleted) contact. */
export async function getContact(bid: string, id: string): Promise<Contact | undefined> {
  const stored = await getStoredContact(bid, id);
  return stored && !stored.contact.deleted_at ? stored.contact : undefined;
}

export async function findContactIdByPhone(bid: string, phone: string): Promise<string | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: table(), Key: keys.contactPhone(bid, phone), ConsistentRead: true }));
  return Item?.contactId as string | undefined;
}

export async function batchGetContacts(bid: string, ids: string[]): Promise<Map<string, StoredContact>> {
  const items = await batchGetAll([...new Set(ids)].map((id) => keys.contact(bid, id)));
  return new Map(items.map((it) => [it.id as string, toStored(it)]));
}

/** phone → contactId for the phones already claimed. */
export async function batchGetPhoneClaims(bid: string, phones: string[]): Promise<Map<string, string>> {
  const items = await batchGetAll([...new Set(phones)].map((p) => keys.contactPhone(bid, p)));
  const prefix = 'CPHONE#';
  return new Map(items.map((it) => [(it.sk as string).slice(prefix.length), it.contactId as string]));
}

/** One page of contact items of a business in id order, deleted ones included (callers filter). */
export async function queryContactItems(bid: string, startKey: Record<string, unknown> | undefined, limit: number) {
  const { pk, skPrefix } = keys.contactPrefix(bid);
  const page = await db.send(new QueryCommand({
    TableName: table(),
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': pk, ':prefix': skPrefix },
    ExclusiveStartKey: startKey,
    Limit: limit,
  }));
  return { items: (page.Items ?? []).map(toContact), lastKey: page.LastEvaluatedKey };
}

/**
 * Who a customer is, as much as a message tells: their phone number (E.164) and their business-scoped user id, either
 * or both (a customer who writes by username may come without a number; Meta sends the user id beside the number too).
 */
export type CustomerIdentity = { phone: string; userId?: string } | { phone?: undefined; userId: string };

/** The live contact an identity claim names; a claim left without one (never written so by this code) is released. */
async function claimedContact(businessId: string, claimKey: Record<string, string>): Promise<StoredContact | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: table(), Key: claimKey, ConsistentRead: true }));
  const id = Item?.contactId as string | undefined;
  if (!id) return undefined;
  const stored = await getStoredContact(businessId, id);
  if (stored && !stored.contact.deleted_at) return stored;
  await db.send(new DeleteCommand({ TableName: table(), Key: claimKey, ConditionExpression: 'contactId = :id', ExpressionAttributeValues: { ':id': id } })).catch(() => undefined);
  throw new RetryableConflict('stale identity claim');
}

/**
 * The contact of a customer, created (origin `inbound` unless told) when neither of their identities names one.
 * One customer is one contact: a contact found by one identity takes the other when it has none yet and no other
 * contact holds it (the number of a username customer who now shows it, the user id Meta sends beside a number),
 * with `contact.updated`. When the two name different contacts, the number's is the one (they are not merged).
 * Race-safe: two concurrent calls for one customer create one contact, the loser reads the winner's. Emits
 * `contact.created`.
 */
export async function findOrCreateContact(
  businessId: string,
  who: CustomerIdentity,
  opts: { origin?: string; name?: string; lastContactAt?: string } = {},
): Promise<{ contact: Contact; created: boolean }> {
  return optimistic(async () => {
    const [byPhone, byUser] = await Promise.all([
      who.phone ? claimedContact(businessId, keys.contactPhone(businessId, who.phone)) : undefined,
      who.userId ? claimedContact(businessId, keys.contactUserId(businessId, who.userId)) : undefined,
    ]);
    const found = byPhone ?? byUser;
    if (found) {
      const c = found.contact;
      // The identity the contact lacks, when no contact holds it.
      const { phone, userId } = who;
      const learnt: { field: 'whatsapp_user_id' | 'phone_number'; claim: TransactItem; value: string } | undefined =
        !byUser && userId && !c.whatsapp_user_id ? { field: 'whatsapp_user_id', value: userId, claim: userIdClaim(businessId, userId, c.id) }
          : !byPhone && phone && !c.phone_number ? { field: 'phone_number', value: phone, claim: phoneClaim(businessId, phone, c.id) } : undefined;
      if (!learnt) return { contact: c, created: false };
      const next: Contact = { ...c, [learnt.field]: learnt.value, updated_at: new Date().toISOString() };
      try {
        await commit([contactPut(businessId, next, found.version, c), learnt.claim], [contactUpdated(businessId, next, [learnt.field])]);
      } catch (err) {
        if (cancellationCodes(err)) throw new RetryableConflict('contact or identity changed concurrently');
        throw err;
      }
      return { contact: next, created: false };
    }
    const identity = { ...(who.phone ? { phone_number: who.phone } : {}), ...(who.userId ? { whatsapp_user_id: who.userId } : {}) };
    const contact = newContact({ ...identity, name: opts.name ?? null, origin: opts.origin ?? 'inbound', last_contact_at: opts.lastContactAt ?? null });
    try {
      await commit([contactPut(businessId, contact, null), ...identityClaims(businessId, contact), ownerPut('contact', contact.id, businessId)], [contactCreated(businessId, contact)]);
    } catch (err) {
      if (cancellationCodes(err)) throw new RetryableConflict('identity claimed concurrently');
      throw err;
    }
    return { contact, created: true };
  });
}

/** The contact of a phone number (any common notation of it), created when there is none: see findOrCreateContact. */
export const findOrCreateContactByPhone = (businessId: string, phone: string, opts: { origin?: string; name?: string } = {}) =>
  findOrCreateContact(businessId, { phone: normalizePhone(phone) ?? `+${phone.replace(/\D/g, '')}` }, opts) as Promise<{ contact: Contact & { phone_number: string }; created: boolean }>;

/** Records a message in either direction: last_contact_at moves forward only (no event: activity is not an edit). */
export async function recordContactActivity(businessId: string, contactId: string, atIso: string): Promise<void> {
  await optimistic(async () => {
    const stored = await getStoredContact(businessId, contactId);
    if (!stored || stored.contact.deleted_at) return;
    const current = stored.contact.last_contact_at;
    if (current && current >= atIso) return;
    const next: Contact = { ...stored.contact, last_contact_at: atIso };
    try {
      await commit([contactPut(businessId, next, stored.version, stored.contact)]);
    } catch (err) {
      if (cancellationCodes(err)) throw new RetryableConflict();
      throw err;
    }
  });
}
