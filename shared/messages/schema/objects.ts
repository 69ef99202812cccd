/** The media, location, reaction and contact-card objects of a send request (see RULES.md for whose rule is whose). */
import * as v from 'valibot';
import { exactlyOne, httpUrl, identifier, maxStr, nonEmpty, object } from './fields.ts';
import { outsideJsonBounds } from '#shared/lang/json-bounds.ts';
import { withoutNulls } from '../sent-nulls.ts';

export const MEDIA_TYPES = ['image', 'video', 'audio', 'document', 'sticker'] as const;
export type MediaType = (typeof MEDIA_TYPES)[number];

export const MAX_CAPTION = 1024;

/**
 * A media message's object. `filenameRequired`: the contract lists a document's filename as required in the
 * service style; the Cloud API's shape (upstream style) makes it optional.
 */
export const media = (type: MediaType, filenameRequired: boolean) => {
  const caption = type === 'image' || type === 'video' || type === 'document'
    ? v.optional(maxStr(`${type}.caption`, MAX_CAPTION))
    : v.optional(v.never(`${type} does not support a caption (only image, video and document do)`));
  const filename = type !== 'document'
    ? v.optional(v.never(`filename is only for documents`))
    : filenameRequired ? nonEmpty('document.filename', 240) : v.optional(nonEmpty('document.filename', 240));
  return v.pipe(
    v.looseObject({
      link: v.optional(httpUrl(`${type}.link`)),
      id: v.optional(identifier(`${type}.id`, 256)),
      caption,
      filename,
      // Meta's voice-message flag (audio only; on other types it is not forwarded).
      voice: v.optional(v.boolean(`${type}.voice must be true or false`)),
    }, `${type} must be an object with link or id`),
    exactlyOne('link', 'id', type),
  );
};

/** A media object inside a template parameter or an interactive header. */
export const mediaParam = (type: 'image' | 'video' | 'document') =>
  v.pipe(v.looseObject({ link: v.optional(httpUrl(`${type}.link`)), id: v.optional(identifier(`${type}.id`, 256)), filename: v.optional(v.string()) }), exactlyOne('link', 'id', type));

const DECIMAL = /^[-+]?(\d+(\.\d*)?|\.\d+)$/;

/** A coordinate: a number, or a decimal string as the Cloud API's own schema types it; forwarded as sent. */
const coordinate = (name: string, limit: number) => v.pipe(
  v.union([v.number(), v.string()], `${name} is required and must be a number`),
  v.check((x) => (typeof x === 'number' ? Number.isFinite(x) : DECIMAL.test(x)), `${name} must be a number`),
  v.check((x) => Math.abs(Number(x)) <= limit, `${name} must be between -${limit} and ${limit}`),
);

export const location = v.looseObject({
  latitude: coordinate('latitude', 90),
  longitude: coordinate('longitude', 180),
  name: v.optional(maxStr('location.name', 1000)),
  address: v.optional(maxStr('location.address', 1000)),
}, 'location must be an object with latitude and longitude');

/**
 * One emoji as a reader sees it: a single grapheme (skin tones, flags, keycaps and ZWJ sequences are one) with a
 * pictograph, a flag's regional indicators or a keycap in it. Meta refuses anything else.
 */
let graphemes: Intl.Segmenter | undefined; // made on first use: it loads ICU's break rules, a cost at a cold start
const EMOJI_PART = /\p{Extended_Pictographic}|\p{Regional_Indicator}|\u20e3/u;
const isOneEmoji = (s: string) =>
  s.length <= 32 && EMOJI_PART.test(s) && [...(graphemes ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' })).segment(s)].length === 1;

export const reaction = v.looseObject({
  message_id: identifier('reaction.message_id', 256),
  // An empty emoji removes the reaction.
  emoji: v.pipe(
    v.string('reaction.emoji is required (an empty string removes the reaction)'),
    v.check((s) => s === '' || isOneEmoji(s), 'reaction.emoji must be a single emoji, or empty to remove the reaction'),
  ),
}, 'reaction must be an object with message_id and emoji');

/**
 * An address on a contact card: a local part, `@`, and a domain without spaces. Meta only types the field as an
 * email; RFC 5322 allows far more than a strict pattern does (quotes, apostrophes, punycode domains, `localhost`).
 */
const CARD_EMAIL = /^.+@[^\s@]+$/;

/** Meta's contact card: `name.formatted_name` required, every other member optional. */
const contactCard = v.looseObject({
  name: v.looseObject({ formatted_name: nonEmpty('name.formatted_name', 1000), first_name: v.optional(v.string()), last_name: v.optional(v.string()) }, 'name.formatted_name is required'),
  phones: v.optional(v.array(v.looseObject({ phone: v.optional(nonEmpty('phone')), type: v.optional(v.string()), wa_id: v.optional(v.string()) }))),
  emails: v.optional(v.array(v.looseObject({ email: v.optional(v.pipe(v.string(), v.regex(CARD_EMAIL, 'email must be an email address (something@domain)'))), type: v.optional(v.string()) }))),
  urls: v.optional(v.array(v.looseObject({ url: v.optional(v.string()), type: v.optional(v.string()) }))),
  addresses: v.optional(v.array(object('address'))),
  org: v.optional(object('org')),
  birthday: v.optional(v.pipe(v.string(), v.regex(/^\d{4}-\d{2}-\d{2}$/, 'birthday must be YYYY-MM-DD'))),
});

/** A string that holds JSON within the bounds of a request body, decoded; anything else as it is (and checked so). */
const decodedJson = (x: unknown): unknown => {
  if (typeof x !== 'string') return x;
  try {
    const decoded: unknown = JSON.parse(x);
    // Decoded, its members sent as null are none, as a body's are in upstream style (sent-nulls.ts).
    return outsideJsonBounds(decoded) ? x : withoutNulls(decoded);
  } catch {
    return x;
  }
};

const contactCards = v.pipe(v.array(contactCard, 'contacts must be an array of contact cards'), v.minLength(1, 'contacts needs 1 to 5 contact cards'), v.maxLength(5, 'contacts needs 1 to 5 contact cards'));

/**
 * The cards, also given as a JSON string of them: Graph decodes a parameter sent JSON-encoded, and whatsapp-api-js
 * sends the cards so. They go upstream as the array.
 */
export const contacts = v.pipe(v.unknown(), v.transform(decodedJson), contactCards);
