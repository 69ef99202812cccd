/**
 * Template sends: the full `template` object (Cloud API shape) and the service's shortcut fields. Component and
 * parameter kinds follow Meta's reference; the contract's own rules are the button index 0-9 and the URL button's
 * single text parameter (placeholder counts are checked against the approved template in shared/templates).
 */
import * as v from 'valibot';
import { byType, cardIndex, identifier, kindAnyCase, nonEmpty, object, str } from './fields.ts';
import { mediaParam } from './objects.ts';

/** A parameter whose value is an object the Cloud API defines (`action`, `product`, `limited_time_offer`...). */
const objectParam = (type: string) => v.looseObject({ type: v.literal(type), [type]: object(type) });

const textParam = v.looseObject({ type: v.literal('text'), text: v.pipe(v.string('text is required'), v.minLength(1, 'text must not be empty'), v.maxLength(32768)) });

/** Parameter kinds of Meta's reference, in any component. */
const parameters: Record<string, v.GenericSchema> = {
  text: textParam,
  currency: v.looseObject({
    type: v.literal('currency'),
    currency: v.looseObject({
      fallback_value: v.string('currency.fallback_value is required'),
      code: v.pipe(v.string('currency.code is required'), v.regex(/^[A-Z]{3}$/, 'currency.code must be an ISO 4217 code such as MXN')),
      amount_1000: v.pipe(v.number('currency.amount_1000 must be an integer (amount x 1000)'), v.integer('currency.amount_1000 must be an integer (amount x 1000)')),
    }),
  }),
  date_time: v.looseObject({ type: v.literal('date_time'), date_time: v.looseObject({ fallback_value: v.string('date_time.fallback_value is required') }) }),
  image: v.looseObject({ type: v.literal('image'), image: mediaParam('image') }),
  video: v.looseObject({ type: v.literal('video'), video: mediaParam('video') }),
  // A GIF header (Meta's header format GIF): an MP4 played as a GIF, given as a video is.
  gif: v.looseObject({ type: v.literal('gif'), gif: mediaParam('video') }),
  document: v.looseObject({ type: v.literal('document'), document: mediaParam('document') }),
  location: objectParam('location'),
  payload: v.looseObject({ type: v.literal('payload'), payload: v.pipe(v.string('payload is required'), v.maxLength(256)) }),
  coupon_code: v.looseObject({ type: v.literal('coupon_code'), coupon_code: nonEmpty('coupon_code', 15) }),
  action: objectParam('action'),
  product: objectParam('product'),
  limited_time_offer: objectParam('limited_time_offer'),
  tap_target_configuration: v.looseObject({ type: v.literal('tap_target_configuration'), tap_target_configuration: v.union([v.array(object('tap_target_configuration')), object('tap_target_configuration')]) }),
  order_status: objectParam('order_status'),
};
const param = (field: string) => byType(field, parameters);
/** Meta's own examples give quick-reply buttons `text` parameters of any JSON scalar. */
const buttonParam = byType('parameter', { ...parameters, text: v.looseObject({ type: v.literal('text'), text: v.union([v.pipe(v.string(), v.maxLength(2000)), v.boolean(), v.number()], 'text must be a string') }) });

/** A string "0" to "9" (the contract), or the number (Meta takes both): forwarded as sent. */
const buttonIndex = v.pipe(
  v.union([v.string(), v.number()], 'index is required: a string "0" to "9"'),
  v.check((x) => /^[0-9]$/.test(String(x)), 'index must be 0-9'),
);

const button = v.pipe(
  v.looseObject({
    type: kindAnyCase('button'),
    // Meta documents quick_reply, url, catalog (also CATALOG), copy_code, flow, mpm, voice_call...: forwarded as sent.
    sub_type: v.pipe(str('sub_type'), v.regex(/^[A-Za-z_]{1,40}$/, 'sub_type must be a button kind such as quick_reply, url, catalog, copy_code, flow, mpm or voice_call')),
    index: buttonIndex,
    // Forwarded as sent: absent stays absent.
    parameters: v.optional(v.array(buttonParam, 'parameters must be an array')),
  }),
  // The contract: a URL button takes one text parameter (the URL's dynamic suffix).
  v.check((b) => b.sub_type.toLowerCase() !== 'url' || (b.parameters?.length === 1 && (b.parameters[0] as { type?: unknown }).type === 'text'), 'a url button takes exactly one text parameter: the dynamic suffix of the button URL'),
);

const components: Record<string, v.GenericSchema> = {
  header: v.looseObject({ type: kindAnyCase('header'), parameters: v.pipe(v.array(param('parameter')), v.maxLength(1, 'a header has one parameter')) }),
  body: v.looseObject({ type: kindAnyCase('body'), parameters: v.optional(v.array(param('parameter'))) }),
  button,
  // A carousel template's cards (at most 10), each with components of its own, checked as the template's are.
  carousel: v.looseObject({
    type: kindAnyCase('carousel'),
    cards: v.pipe(
      v.array(v.looseObject({ card_index: cardIndex, components: v.array(v.lazy(() => component), 'card.components must be an array') }, 'each card must be an object with card_index and components'), 'cards must be an array of cards'),
      v.minLength(1, 'a carousel needs 1 to 10 cards'),
      v.maxLength(10, 'a carousel needs 1 to 10 cards'),
    ),
  }),
};
/** Other component kinds of Meta's reference (limited_time_offer...) are forwarded as sent. */
const otherComponent = v.looseObject({ type: v.pipe(str('component type'), v.regex(/^[A-Za-z_]{1,40}$/, 'component type must be header, body, button or another Cloud API component kind')) });
/** Component kinds in either case, as Meta takes them (pywa sends `HEADER`, `BODY`, `LIMITED_TIME_OFFER`): forwarded as sent. */
const component: v.GenericSchema = byType('component', components, otherComponent, { anyCase: true });

export const fullTemplate = v.looseObject({
  name: identifier('template.name', 512),
  language: v.union([
    v.looseObject({ code: identifier('template.language.code', 15), policy: v.optional(v.literal('deterministic', 'policy must be "deterministic"')) }),
    v.pipe(nonEmpty('template.language', 15), v.transform((code) => ({ code }))),
  ], 'template.language must be { code, policy? }'),
  components: v.optional(v.array(component, 'template.components must be an array')),
}, 'template must be an object with name, language and components');

const headerMedia = v.pipe(
  v.looseObject({
    type: v.picklist(['image', 'video', 'document'], 'header_media.type is required: image, video or document'),
    url: v.optional(nonEmpty('header_media.url', 2048)),
    media_id: v.optional(identifier('header_media.media_id', 256)),
    filename: v.optional(v.string()),
  }, 'header_media must be an object'),
  v.check((h) => h.url !== undefined || h.media_id !== undefined, 'header_media needs url or media_id'),
);

/** The template members of a send request: the full form or the service's shortcut (contract, "Template messages"). */
export const templateFields = {
  template: v.optional(fullTemplate),
  templateName: v.optional(identifier('templateName', 512)),
  // Each fills a body placeholder: Meta refuses an empty text parameter, as the full form's `text` is refused here.
  template_parameters: v.optional(v.array(v.pipe(
    v.union([v.string(), v.number()], 'template_parameters must be strings'),
    v.transform(String),
    v.check((p) => p !== '', 'template_parameters must not be empty: each fills a placeholder'),
  ), 'template_parameters must be an array of strings')),
  language: v.optional(nonEmpty('language', 15)),
  header_media: v.optional(headerMedia),
  allowButtonIdOverride: v.optional(v.boolean('allowButtonIdOverride must be a boolean')),
};
