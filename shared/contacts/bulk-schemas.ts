/**
 * `POST /contacts/v1/bulk` request shapes. The envelope is checked up front (400 validation_error); each
 * contact of `contacts` is checked on its own, so one bad item fails only itself.
 */
import * as v from 'valibot';
import { uuid } from '#shared/http/schemas.ts';
import { createContactFields, tagList, updateContactFields, withinContactSize } from './schemas.ts';

export const MAX_BULK_CONTACTS = 100;

export const BULK_OPERATIONS = ['create', 'update', 'delete', 'add_tags', 'remove_tags', 'set_funnel_stage'] as const;
export type BulkOperation = (typeof BULK_OPERATIONS)[number];

export const bulkBody = v.object({
  operation: v.picklist(BULK_OPERATIONS, `must be one of ${BULK_OPERATIONS.join(', ')}`),
  contacts: v.optional(v.pipe(v.array(v.unknown(), 'must be an array of objects'), v.minLength(1, 'must not be empty'), v.maxLength(MAX_BULK_CONTACTS, `at most ${MAX_BULK_CONTACTS} contacts per request`))),
  contact_ids: v.optional(v.pipe(v.array(v.string('must be strings'), 'must be an array of contact ids'), v.minLength(1, 'must not be empty'), v.maxLength(MAX_BULK_CONTACTS, `at most ${MAX_BULK_CONTACTS} contact ids per request`))),
  tags: v.optional(v.pipe(tagList, v.minLength(1, 'must not be empty'))),
  funnel_stage_id: v.optional(v.nullable(uuid())),
});

export type BulkBody = v.InferOutput<typeof bulkBody>;

/** A bulk item takes the fields of its single-contact request (POST or PATCH /contacts/v1), so none is dropped. */

export const bulkCreateItem = v.pipe(
  v.object({ phone_number: v.string('phone_number must be a string'), ...createContactFields }),
  withinContactSize(),
);

export const bulkUpdateItem = v.object({ id: uuid(), ...updateContactFields });

/**
 * Whether an item changes what the batched write of a contact does not cover (its phone number, its agent, its
 * funnel stage): such an item is done by the single-contact service, with the conversations, stage counters,
 * phone claims and events that go with it.
 */
export const needsSingleContactPath = (item: { phone_number?: string; assigned_agent_id?: string | null; funnel_stage_id?: string | null }, creating: boolean): boolean =>
  (creating ? !!item.assigned_agent_id || !!item.funnel_stage_id : item.phone_number !== undefined || item.assigned_agent_id !== undefined || item.funnel_stage_id !== undefined);

/** Which list each operation works on. */
export const listOf = (op: BulkOperation): 'contacts' | 'contact_ids' => (op === 'create' || op === 'update' ? 'contacts' : 'contact_ids');
