/** Request schemas of the broadcast endpoints. The template itself is checked by the send validator (service). */
import * as v from 'valibot';
import { maxCharacters } from '#shared/lang/characters.ts';
import { uuid } from '#shared/http/schemas.ts';
import { BROADCAST_STATUSES, RECIPIENT_STATUSES } from './model.ts';
import { broadcastSettings } from './settings.ts';

const contactIds = v.pipe(
  v.array(uuid('contact_ids must hold contact UUIDs'), 'contact_ids must be an array of contact UUIDs'),
  v.minLength(1, 'contact_ids must not be empty'),
  v.maxLength(broadcastSettings.maxContactIds, `contact_ids holds at most ${broadcastSettings.maxContactIds} ids`),
);

export const createBroadcastBody = v.object({
  name: v.pipe(v.string('name is required'), v.trim(), v.minLength(1, 'name must not be empty'), maxCharacters(200, 'name must be at most 200 characters')),
  // The template, in any of the three forms of a template send (validated like POST /messages/v1).
  type: v.optional(v.literal('template', 'type must be "template": a broadcast sends an approved template')),
  templateName: v.optional(v.unknown()),
  template_parameters: v.optional(v.unknown()),
  language: v.optional(v.unknown()),
  header_media: v.optional(v.unknown()),
  allowButtonIdOverride: v.optional(v.unknown()),
  template: v.optional(v.unknown()),
  // The audience: a segment or an explicit list, at the top level or inside `audience`.
  segment_id: v.optional(uuid('segment_id must be a UUID')),
  contact_ids: v.optional(contactIds),
  audience: v.optional(v.object({
    segment_id: v.optional(uuid('audience.segment_id must be a UUID')),
    contact_ids: v.optional(contactIds),
  }, 'audience must be an object with segment_id or contact_ids')),
  send_at: v.optional(v.nullable(v.string('send_at must be an ISO 8601 date-time'))),
});

export type CreateBroadcastInput = v.InferOutput<typeof createBroadcastBody>;

/**
 * A page of broadcasts holds at most 50: each carries its template, up to 64 KB as a send request may be, and a page
 * must stay within Lambda's 6 MB response.
 */
const limit = v.optional(
  v.pipe(v.string(), v.regex(/^\d+$/, 'limit must be a whole number'), v.transform(Number), v.minValue(1, 'limit must be 1 to 50'), v.maxValue(50, 'limit must be 1 to 50')),
  '20',
);
const cursor = v.optional(v.pipe(v.string(), v.maxLength(2048)));

export const listBroadcastsQuery = v.object({
  limit,
  cursor,
  status: v.optional(v.picklist(BROADCAST_STATUSES, `status must be one of ${BROADCAST_STATUSES.join(', ')}`)),
});

export const recipientsQuery = v.object({
  limit: v.optional(
    v.pipe(v.string(), v.regex(/^\d+$/, 'limit must be a whole number'), v.transform(Number), v.minValue(1, 'limit must be 1 to 500'), v.maxValue(500, 'limit must be 1 to 500')),
    '50',
  ),
  cursor,
  status: v.optional(v.picklist(RECIPIENT_STATUSES, `status must be one of ${RECIPIENT_STATUSES.join(', ')}`)),
  /** Alias of `status`. */
  outcome: v.optional(v.picklist(RECIPIENT_STATUSES, `outcome must be one of ${RECIPIENT_STATUSES.join(', ')}`)),
});
