/** Request shapes of the segment endpoints (format checks only; rules are checked by rules.ts). */
import * as v from 'valibot';
import { maxCharacters } from '#shared/lang/characters.ts';
import { notAnArray, UUID_RE } from '#shared/http/schemas.ts';

const name = v.pipe(v.string('name must be a string'), v.trim(), v.minLength(1, 'name must not be empty'), maxCharacters(200, 'name must be at most 200 characters'));
/**
 * Also bounded in bytes: `GET /segments` answers all 1,000 of a business's segments at once, within Lambda's 6 MB
 * (2,000 characters of 4-byte UTF-8 were 8 KB a segment, 9 MB a list).
 */
const DESCRIPTION_BYTES = 3_072;
const description = v.nullable(v.pipe(
  v.string('description must be a string'),
  maxCharacters(2000, 'description must be at most 2000 characters'),
  v.check((s) => Buffer.byteLength(s, 'utf8') <= DESCRIPTION_BYTES, `description must be at most ${DESCRIPTION_BYTES.toLocaleString('en-US')} bytes as UTF-8`),
));
const color = v.nullable(v.pipe(v.string('color must be a string'), maxCharacters(50, 'color must be at most 50 characters')));

/** The object-level message: a missing required key names the key; anything else is not a JSON object. */
const bodyMessage = (issue: v.BaseIssue<unknown>) =>
  issue.path?.length ? `${issue.path.map((p) => String(p.key)).join('.')} is required` : 'the body must be a JSON object';

export const createSegmentBody = v.object({
  name,
  type: v.picklist(['static', 'dynamic'], 'type must be "static" or "dynamic"'),
  description: v.optional(description),
  color: v.optional(color),
  rules: v.optional(v.unknown()),
  autoRefreshInterval: v.optional(v.unknown()),
}, bodyMessage);

export const updateSegmentBody = v.pipe(
  notAnArray('the body must be a JSON object'),
  v.object({
    name: v.optional(name),
    description: v.optional(description),
    color: v.optional(color),
    rules: v.optional(v.unknown()),
    type: v.optional(v.unknown()),
    autoRefreshInterval: v.optional(v.unknown()),
  }, 'the body must be a JSON object'),
);

export const previewBody = v.object({
  rules: v.unknown(),
  limit: v.optional(v.pipe(v.number('limit must be a number'), v.integer('limit must be a whole number'), v.minValue(1, 'limit must be 1-100'), v.maxValue(100, 'limit must be 1-100'))),
}, bodyMessage);

const wholeNumber = (field: string, min: number, max: number) =>
  v.pipe(
    v.string(),
    v.regex(/^\d+$/, `${field} must be a whole number`),
    v.transform(Number),
    v.minValue(min, `${field} must be ${min}-${max}`),
    v.maxValue(max, `${field} must be ${min}-${max}`),
  );

export const detailQuery = v.object({
  limit: v.optional(wholeNumber('limit', 1, 100), '50'),
  offset: v.optional(wholeNumber('offset', 0, 10_000_000), '0'),
});

const contactId = v.pipe(v.string('each contact id must be a UUID'), v.regex(UUID_RE, 'each contact id must be a UUID'));
export const MAX_CONTACT_IDS = 10_000;
const contactIds = v.pipe(
  v.array(contactId, 'contactIds must be a list of UUIDs'),
  v.minLength(1, 'contactIds must hold at least 1 id'),
  v.maxLength(MAX_CONTACT_IDS, `contactIds must hold at most ${MAX_CONTACT_IDS} ids`),
);

export const membersBody = v.strictObject({
  action: v.picklist(['add', 'remove'], 'action must be "add" or "remove"'),
  contactIds: v.optional(contactIds),
  search: v.optional(v.pipe(v.string('search must be a string'), v.trim(), v.minLength(1, 'search must be 1-200 characters, not empty'), maxCharacters(200, 'search must be 1-200 characters'))),
  filters: v.optional(v.unknown()),
}, (issue) => (issue.expected === 'never' ? `unknown field (allowed: action, contactIds, search, filters)` : bodyMessage(issue)));

export const addContactsBody = v.object({
  contactIds: v.optional(contactIds),
  contact_ids: v.optional(contactIds),
}, 'the body must be a JSON object');
