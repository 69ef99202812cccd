/** Request shapes of the funnel endpoints (valibot); failures answer 400 validation_error with details per field. */
import * as v from 'valibot';
import { maxCharacters } from '#shared/lang/characters.ts';
import { uuid } from '#shared/http/schemas.ts';

const stageName = v.pipe(
  v.string('name must be a string'),
  v.trim(),
  v.minLength(1, 'name must be 1-100 characters'),
  maxCharacters(100, 'name must be 1-100 characters'),
);
const color = v.pipe(v.string('color must be a string'), v.regex(/^#[0-9a-fA-F]{6}$/, 'color must be a hex colour #RRGGBB'));

export const createStageBody = v.object({
  name: stageName,
  color: v.optional(color),
  position: v.optional(v.pipe(v.number('position must be a number'), v.integer('position must be an integer'), v.minValue(0, 'position must be 0 or more'))),
});

export const updateStageBody = v.object({
  name: v.optional(stageName),
  color: v.optional(color),
});

export const reorderBody = v.object({
  stage_ids: v.pipe(
    v.array(uuid('each stage id must be a UUID'), 'stage_ids must be an array of stage ids'),
    v.minLength(1, 'stage_ids must list at least one stage'),
    v.check((ids) => new Set(ids.map((id) => id.toLowerCase())).size === ids.length, 'stage_ids must not repeat a stage'),
  ),
});

export const moveBody = v.object({
  stage_id: v.nullable(uuid('stage_id must be a UUID or null')),
});

/** Path ids that are not UUIDs name nothing: 404, like any unknown id. */

export { idParams as funnelIdParams } from '#shared/http/schemas.ts';
