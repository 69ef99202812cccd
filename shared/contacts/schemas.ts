/**
 * Request shapes of the contact endpoints (valibot). Phone numbers are checked by the service (they are
 * normalised to E.164 there); everything else is checked here.
 */
import * as v from 'valibot';
import { maxCharacters } from '#shared/lang/characters.ts';
import { notAnArray, pageQuery, uuid } from '#shared/http/schemas.ts';

export { idParams } from '#shared/http/schemas.ts';
import { UNSTORABLE_KEYS, unstorableKeysOf } from '#shared/lang/client-keys.ts';

export const MAX_TAGS = 100;
export const MAX_CUSTOM_FIELDS = 100;

/**
 * A contact's own data (name, email, tags, custom fields) as JSON is at most this many bytes of UTF-8. Each field has
 * a bound of its own, but together they allowed items past DynamoDB's 400 KB (with the contact's search projection
 * and its event beside it), a page of 100 contacts past Lambda's 6 MB response, and bulk groups past a transaction's
 * 4 MB. 32 KB keeps a page of 100 near 3.3 MB.
 */
export const MAX_CONTACT_DATA_BYTES = 32_768;

/** What `MAX_CONTACT_DATA_BYTES` bounds, in a stored contact or a request body. */
type ContactData = { name?: string | null; email?: string | null; tags?: string[]; custom_fields?: Record<string, unknown> };

/** The size `MAX_CONTACT_DATA_BYTES` bounds. */
export const contactDataBytes = (c: ContactData): number =>
  Buffer.byteLength(JSON.stringify({ name: c.name ?? null, email: c.email ?? null, tags: c.tags ?? [], custom_fields: c.custom_fields ?? {} }), 'utf8');

export const tooLargeMessage = (bytes: number) => `the contact's name, email, tags and custom fields would take ${bytes.toLocaleString('en-US')} bytes as JSON; at most ${MAX_CONTACT_DATA_BYTES.toLocaleString('en-US')}`;

/** The check on a whole create body, named on custom_fields (where the bytes usually are). */
export const withinContactSize = <T extends ContactData>() =>
  // valibot cannot type a path into a generic object; `custom_fields` is a member of every body this is used on.
  v.forward(v.check((c: T) => contactDataBytes(c) <= MAX_CONTACT_DATA_BYTES, (issue) => tooLargeMessage(contactDataBytes(issue.input as T))), ['custom_fields'] as never);

export const tag = v.pipe(v.string('must be a string'), v.trim(), v.minLength(1, 'must not be empty'), maxCharacters(100, 'at most 100 characters'));
export const tagList = v.pipe(v.array(tag, 'must be an array of strings'), v.maxLength(MAX_TAGS, `at most ${MAX_TAGS} tags`));

export const name = v.nullable(v.pipe(v.string('must be a string'), v.trim(), maxCharacters(200, 'at most 200 characters')));
export const email = v.nullable(v.pipe(v.string('must be a string'), v.trim(), v.toLowerCase(), v.maxLength(254, 'at most 254 characters'), v.email('must be a valid email address')));

/**
 * An object of scalars: nested objects and arrays are refused so that filters can compare values. The names
 * a record would drop silently are refused first, so that no value given is lost.
 */
export const customFields = v.pipe(
  // valibot's record takes an array as an object without keys.
  notAnArray('must be an object of scalar values'),
  v.custom<unknown>((x) => unstorableKeysOf(x).length === 0, `custom field names may not be ${UNSTORABLE_KEYS.join(', ')}`),
  v.record(
    v.pipe(v.string(), v.minLength(1, 'keys must not be empty'), maxCharacters(100, 'keys have at most 100 characters')),
    v.union([v.pipe(v.string(), maxCharacters(2000, 'values have at most 2000 characters')), v.number(), v.boolean(), v.null()], 'values must be strings, numbers, booleans or null'),
    'must be an object of scalar values',
  ),
  v.check((o) => Object.keys(o).length <= MAX_CUSTOM_FIELDS, `at most ${MAX_CUSTOM_FIELDS} fields`),
);

const phone = v.pipe(v.string('must be a string'), v.minLength(1, 'is required'), v.maxLength(40, 'at most 40 characters'));

/** What describes a contact, in every request that writes one (single or bulk). */
export const profileFields = {
  name: v.optional(name),
  email: v.optional(email),
  tags: v.optional(tagList),
  /** On an update, merged into the stored fields; a key set to null is removed. */
  custom_fields: v.optional(customFields),
};

/** An update's tag changes beside (or instead of) a whole new `tags` list. */
export const tagChanges = { add_tags: v.optional(tagList), remove_tags: v.optional(tagList) };

export const optedOut = v.optional(v.boolean('must be a boolean'));

/** Assignment and funnel stage: each needs items of its own (conversations, stage counters), beside the contact's. */
const placementFields = { assigned_agent_id: v.optional(v.nullable(uuid())), funnel_stage_id: v.optional(v.nullable(uuid())) };

/** The fields of a contact create, single or bulk (a bulk item's phone number is checked by the service, item by item). */
export const createContactFields = { ...profileFields, ...placementFields, opted_out: optedOut };

/** The fields of a contact update, single or bulk. */
export const updateContactFields = { phone_number: v.optional(phone), ...profileFields, ...tagChanges, ...placementFields, opted_out: optedOut };

export const createContactBody = v.pipe(v.object({ phone_number: phone, ...createContactFields }), withinContactSize());

export const updateContactBody = v.object(updateContactFields);

export type CreateContactInput = v.InferOutput<typeof createContactBody> & { origin?: string };
export type UpdateContactInput = v.InferOutput<typeof updateContactBody>;

/** Tags compared case-insensitively; the first spelling wins. */
export const dedupeTags = (tags: string[]): string[] => {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const t of tags) {
    const key = t.trim().toLowerCase();
    if (!key || seen.has(key)) continue;
    seen.add(key);
    out.push(t.trim());
  }
  return out;
};

/** Path ids that are not UUIDs name no contact: 404, like any unknown id. */

export const listContactsQuery = v.object({
  ...pageQuery(100, 20).entries,
  search: v.optional(v.pipe(v.string(), maxCharacters(200, 'at most 200 characters'))),
  filters: v.optional(v.pipe(v.string(), v.maxLength(8000, 'at most 8000 characters'))),
});
