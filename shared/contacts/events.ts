/**
 * Payloads of the contact events (the contract leaves them open; these shapes are documented in the README):
 * - contact.created  { contact_id, phone_number, contact, created_at }
 * - contact.updated  { contact_id, phone_number, changed_fields, contact, updated_at }
 * - contact.deleted  { contact_id, phone_number, deleted_at }
 * `contact` is the record as GET /contacts/v1/{id} returns it.
 */
import { newEvent, type DomainEvent } from '#shared/events/outbox.ts';
import type { Contact } from './model.ts';

export const contactCreated = (bid: string, c: Contact): DomainEvent =>
  newEvent(bid, 'contact.created', { contact_id: c.id, phone_number: c.phone_number, contact: c, created_at: c.created_at });

export const contactUpdated = (bid: string, c: Contact, changedFields: string[]): DomainEvent =>
  newEvent(bid, 'contact.updated', { contact_id: c.id, phone_number: c.phone_number, changed_fields: changedFields, contact: c, updated_at: c.updated_at });

export const contactDeleted = (bid: string, c: Contact): DomainEvent =>
  newEvent(bid, 'contact.deleted', { contact_id: c.id, phone_number: c.phone_number, deleted_at: c.deleted_at });

/** Fields whose values differ between two versions of a record (what contact.updated reports). */
export const changedFields = (before: Contact, after: Contact): string[] =>
  (Object.keys(after) as (keyof Contact)[]).filter(
    (k) => k !== 'updated_at' && JSON.stringify(before[k]) !== JSON.stringify(after[k]),
  );
