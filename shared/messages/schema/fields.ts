/** The field schemas every part of a send request is built from (one wording for each kind of issue). */
import * as v from 'valibot';
import { maxCharacters } from '#shared/lang/characters.ts';

export const str = (field: string) => v.string(`${field} must be a string`);

const atMost = (field: string, max: number) => maxCharacters(max, `${field} must be at most ${max} characters`);

/** A string with something besides white space in it, forwarded as sent (white space included). */
export const nonEmpty = (field: string, max?: number) =>
  max === undefined
    ? v.pipe(str(field), v.check((s) => s.trim() !== '', `${field} must not be empty`))
    : v.pipe(str(field), v.check((s) => s.trim() !== '', `${field} must not be empty`), atMost(field, max));

/**
 * An id or name the service looks up (a message, a media id, a template and its language): white space around it is
 * no part of it, so it is trimmed; what the client chose (texts, reply ids) is forwarded as sent instead.
 */
export const identifier = (field: string, max: number) =>
  v.pipe(str(field), v.trim(), v.minLength(1, `${field} must not be empty`), atMost(field, max));

export const maxStr = (field: string, max: number) => v.pipe(str(field), atMost(field, max));

export const httpUrl = (field: string) =>
  v.pipe(str(field), v.trim(), v.url(`${field} must be an absolute http(s) URL`), v.check((s) => /^https?:\/\//i.test(s), `${field} must be an http(s) URL`));

export const exactlyOne = (a: string, b: string, type: string) =>
  v.check((o: any) => (o[a] !== undefined) !== (o[b] !== undefined), `${type} needs exactly one of ${a} or ${b} (they are mutually exclusive)`);

/** A JSON object whose members the Cloud API defines (forwarded as sent). */
export const object = (field: string) => v.looseObject({}, `${field} must be an object`);

/**
 * An object told apart by its `type`: the kinds in `known` are checked with their schema, any other kind with
 * `other` (the Cloud API adds kinds over time; ours forwards them) or refused when `other` is not given.
 */
export function byType(field: string, known: Record<string, v.GenericSchema>, other?: v.GenericSchema, { anyCase = false } = {}) {
  const kinds = Object.keys(known).join(', ');
  const refuse = v.looseObject({ type: v.picklist(Object.keys(known), `${field}.type must be one of ${kinds}`) });
  const untyped = v.looseObject({ type: str(`${field}.type`) }, `${field} must be an object with a type`);
  return v.lazy((input: unknown) => {
    const given = (input as { type?: unknown } | null)?.type;
    if (typeof given !== 'string') return untyped;
    const type = anyCase ? given.toLowerCase() : given;
    return Object.hasOwn(known, type) ? known[type] : other ?? refuse;
  });
}

/** A `type` that names `kind` in any case (`body`, `BODY`), kept as sent. */
export const kindAnyCase = (kind: string) => v.pipe(v.string(), v.check((t) => t.toLowerCase() === kind, `type must be ${kind}`));

/** A carousel card's place, left to right from 0 (Meta's `card_index`, in interactive and template carousels). */
export const cardIndex = v.pipe(v.number('card_index must be a whole number 0-9'), v.integer('card_index must be a whole number 0-9'), v.minValue(0, 'card_index must be 0-9'), v.maxValue(9, 'card_index must be 0-9'));
