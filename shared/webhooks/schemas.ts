/** Request schemas of the webhook subscription endpoints. */
import * as v from 'valibot';
import { uuid } from '#shared/http/schemas.ts';
import { maxCharacters } from '#shared/lang/characters.ts';
import { isEventName } from '#shared/events/names.ts';
import { targetProblem } from './target.ts';

const name = v.pipe(v.string('must be a string'), v.trim(), v.minLength(1, 'must not be empty'), maxCharacters(100, 'must be at most 100 characters'));

const url = v.pipe(
  v.string('must be a string'),
  v.trim(),
  v.maxLength(2048, 'must be at most 2048 characters'),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const problem = targetProblem(dataset.value);
    if (problem) addIssue({ message: problem });
  }),
);

/** Event names of the contract, or `*` for all; unknown names are refused, duplicates dropped. */
const events = v.pipe(
  v.array(v.string('must be event names'), 'must be an array of event names'),
  v.minLength(1, 'must name at least one event (or "*")'),
  v.maxLength(50, 'must name at most 50 events'),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const unknown = dataset.value.filter((e) => e !== '*' && !isEventName(e));
    if (unknown.length > 0) addIssue({ message: `unknown event name${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}` });
  }),
  v.transform((list) => [...new Set(list)]),
);

/** Never set by a client (a client that sends one would believe its receivers verify with it): the service issues it. */
const secret = v.optional(v.never('cannot be set: the service issues one on create, and POST /user-webhooks/{id}/regenerate-secret a new one'));

/** false pauses deliveries; true re-enables a subscription disabled by the service or by hand. */
const enabled = v.optional(v.boolean('must be a boolean'));

/** `enabled: false` creates a paused subscription (deliveries start once it is enabled). */
export const createBody = v.object({ name, url, events, enabled, secret });

export const updateBody = v.object({
  name: v.optional(name),
  url: v.optional(url),
  events: v.optional(events),
  enabled,
  secret,
});

export const deliveryParams = v.object({ id: uuid(), deliveryId: uuid() });

export type CreateInput = v.InferOutput<typeof createBody>;
export type UpdateInput = v.InferOutput<typeof updateBody>;
