/**
 * Validation of `POST /messages/v1` (service style and upstream style) before anything goes upstream. The schema
 * is picked by the message type so that each issue names its field (`image.caption`, `location.latitude`,
 * `template.components.0.index`...). Which rule comes from the contract and which from the Cloud API: schema/RULES.md.
 */
import * as v from 'valibot';
import { ApiError, validationError, type FieldErrors } from '#shared/http/errors.ts';
import { notAnArray } from '#shared/http/schemas.ts';
import { toFieldErrors, summarize } from '#shared/http/validation.ts';
import { identifier, maxStr, nonEmpty } from './schema/fields.ts';
import { contacts, location, media, reaction } from './schema/objects.ts';
import { interactive } from './schema/interactive.ts';
import { outsideShapeBound } from './schema/shape.ts';
import { templateFields } from './schema/template.ts';
import { durationMinutes } from '#shared/ai/duration.ts';
import { withoutTrunkZero } from '#shared/contacts/phone.ts';
import { keepSentBody, withoutNulls } from './sent-nulls.ts';

export { MEDIA_TYPES, MAX_CAPTION, type MediaType } from './schema/objects.ts';

export const MESSAGE_TYPES = ['text', 'image', 'video', 'audio', 'document', 'sticker', 'template', 'interactive', 'location', 'contacts', 'reaction'] as const;
export type MessageType = (typeof MESSAGE_TYPES)[number];

/** Cloud API text body limit. */
export const MAX_TEXT = 4096;
/**
 * The most a send request may weigh (UTF-8 JSON). The message is kept on its record and in its events, which
 * must fit one table item (400 KB); the Cloud API's largest messages (30-product lists, full contact cards,
 * order details) stay far below it.
 */
export const MAX_MESSAGE_BYTES = 64 * 1024;

const E164 = /^\+[1-9]\d{6,14}$/;

const to = v.pipe(
  v.string('to is required: the recipient in international format with a leading +'),
  v.trim(),
  v.transform((s) => withoutTrunkZero(s).replace(/[\s\-().]/g, '')),
  v.regex(E164, 'to must be in international format with a leading + (for example +5215512345678)'),
);

const ai = v.optional(v.pipe(
  notAnArray('ai must be an object'),
  v.looseObject({
    pause: v.optional(v.boolean('ai.pause must be a boolean')),
    pauseDuration: v.optional(durationMinutes('ai.pauseDuration must be a number of minutes between 1 and 1440')),
    disable: v.optional(v.boolean('ai.disable must be a boolean')),
  }, 'ai must be an object'),
));

const common = {
  to,
  type: v.optional(v.picklist(MESSAGE_TYPES)),
  messaging_product: v.optional(v.literal('whatsapp', 'messaging_product must be "whatsapp"')),
  recipient_type: v.optional(v.literal('individual', 'only 1:1 chats are supported: recipient_type must be "individual"')),
  context: v.optional(v.looseObject({ message_id: identifier('context.message_id', 256) })),
  ai,
  autoConvert: v.optional(v.boolean('autoConvert must be a boolean')),
  biz_opaque_callback_data: v.optional(maxStr('biz_opaque_callback_data', 512)),
  // Meta delivers the message only while the customer's identity key still has this hash.
  recipient_identity_key_hash: v.optional(maxStr('recipient_identity_key_hash', 256)),
};

const schemasFor = (upstreamStyle: boolean): Record<MessageType, v.GenericSchema> => ({
  text: v.pipe(
    v.looseObject({
      ...common,
      content: v.optional(nonEmpty('content', MAX_TEXT)),
      text: v.optional(v.looseObject({ body: nonEmpty('text.body', MAX_TEXT), preview_url: v.optional(v.boolean('text.preview_url must be a boolean')) }, 'text must be an object with body')),
    }),
    v.check((b) => b.content !== undefined || b.text !== undefined, 'a text message needs content (service style) or text.body (upstream style)'),
    // Both would leave one of them unsent without a word.
    v.check((b) => b.content === undefined || b.text === undefined, 'a text message takes content (service style) or text.body (upstream style), not both'),
  ),
  image: v.looseObject({ ...common, image: media('image', !upstreamStyle) }),
  video: v.looseObject({ ...common, video: media('video', !upstreamStyle) }),
  audio: v.looseObject({ ...common, audio: media('audio', !upstreamStyle) }),
  document: v.looseObject({ ...common, document: media('document', !upstreamStyle) }),
  sticker: v.looseObject({ ...common, sticker: media('sticker', !upstreamStyle) }),
  location: v.looseObject({ ...common, location }),
  reaction: v.looseObject({ ...common, reaction }),
  interactive: v.looseObject({ ...common, interactive }),
  contacts: v.looseObject({ ...common, contacts }),
  template: v.pipe(
    v.looseObject({ ...common, ...templateFields }),
    v.check((b) => b.template !== undefined || b.templateName !== undefined, 'a template message needs templateName (shortcut) or a template object'),
    v.check((b) => b.template === undefined || b.templateName === undefined, 'a template message takes templateName (shortcut) or a template object, not both'),
  ),
});
const SERVICE_STYLE = schemasFor(false);
const UPSTREAM_STYLE = schemasFor(true);

export type SendRequest = Record<string, any> & { to: string; type: MessageType };

/**
 * The Cloud API takes a recipient as digits (`16505551234`), also as a JSON number (Graph reads its parameters as
 * strings); the service's own form has a leading +.
 */
const withPlus = (to: unknown) =>
  typeof to === 'number' && Number.isSafeInteger(to) && to > 0 ? `+${to}`
    : typeof to === 'string' && /^\s*[1-9][\d\s\-().]{6,20}$/.test(to) ? `+${to.trim()}` : to;

/**
 * A body without `type`. In service style it is a text (given `content`): the contract requires `type` for every
 * other kind. In upstream style the member that carries the message names it, as Meta's own examples send a list
 * reply without one ("Send Reply to List Message"), and a text is the Cloud API's default.
 */
function typeOf(body: Record<string, any>, upstreamStyle: boolean): any {
  if (body.type !== undefined) return body.type;
  if (body.content !== undefined || body.text !== undefined) return 'text';
  const present = MESSAGE_TYPES.filter((t) => body[t] !== undefined);
  return upstreamStyle && present.length === 1 ? present[0] : undefined;
}

/** Validates a send request; throws the contract's 400 `validation_error` naming the fields, or 413 when it is too large. */
export function parseSendRequest(input: unknown): SendRequest {
  if (!input || typeof input !== 'object' || Array.isArray(input)) {
    throw validationError({ _body: ['The body must be a JSON object'] }, 'The body must be a JSON object');
  }
  const size = Buffer.byteLength(JSON.stringify(input));
  if (size > MAX_MESSAGE_BYTES) {
    throw new ApiError(413, { error: 'payload_too_large', message: `A message may be at most ${MAX_MESSAGE_BYTES} bytes of JSON; this one is ${size} bytes`, limit_bytes: MAX_MESSAGE_BYTES });
  }
  const outside = outsideShapeBound(input);
  if (outside) throw validationError({ [outside.at]: [outside.problem] }, `Invalid message: ${outside.problem}`);
  // A messaging_product of null is none (as any null member is): a body without one is the service's style.
  const upstreamStyle = (input as Record<string, unknown>).messaging_product != null;
  const body = upstreamStyle ? { ...withoutNulls(input as Record<string, any>), to: withPlus((input as Record<string, any>).to) } : (input as Record<string, any>);
  const type = typeOf(body, upstreamStyle);
  if (type === undefined) throw invalid({ type: ['type is required for non-text messages (or give content for a text message)'] });
  if (!(MESSAGE_TYPES as readonly string[]).includes(type)) {
    throw invalid({ type: [`type must be one of ${MESSAGE_TYPES.join(', ')}`] });
  }
  const parsed = v.safeParse((upstreamStyle ? UPSTREAM_STYLE : SERVICE_STYLE)[type as MessageType], body);
  if (!parsed.success) {
    const details = toFieldErrors(parsed.issues);
    // A check on the whole body has no path: name the field it is about.
    if (details._body) {
      const field = type === 'text' ? 'content' : type === 'template' ? 'templateName' : type;
      details[field] = [...(details[field] ?? []), ...details._body];
      delete details._body;
    }
    throw invalid(details);
  }
  const request = { ...(parsed.output as Record<string, any>), type } as SendRequest;
  if (upstreamStyle) keepSentBody(request, input);
  return request;
}

const invalid = (details: FieldErrors) => validationError(details, `Invalid message: ${summarize(details)}`);
