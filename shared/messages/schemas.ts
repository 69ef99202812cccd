/**
 * Validation of `POST /messages/v1` (service style and upstream style) with every limit of the contract,
 * before anything goes upstream. The schema is picked by the message type so that each issue names its
 * field (`image.caption`, `location.latitude`, `template.components.0.index`...).
 */
import * as v from 'valibot';
import { validationError, type FieldErrors } from '#shared/http/errors.ts';
import { toFieldErrors, summarize } from '#shared/http/validation.ts';

export const MESSAGE_TYPES = ['text', 'image', 'video', 'audio', 'document', 'sticker', 'template', 'interactive', 'location', 'contacts', 'reaction'] as const;
export type MessageType = (typeof MESSAGE_TYPES)[number];
export const MEDIA_TYPES = ['image', 'video', 'audio', 'document', 'sticker'] as const;
export type MediaType = (typeof MEDIA_TYPES)[number];

/** Cloud API text body limit. */
export const MAX_TEXT = 4096;
export const MAX_CAPTION = 1024;

const E164 = /^\+[1-9]\d{6,14}$/;
const str = (field: string) => v.string(`${field} must be a string`);
const nonEmpty = (field: string, max?: number) =>
  max === undefined
    ? v.pipe(str(field), v.trim(), v.minLength(1, `${field} must not be empty`))
    : v.pipe(str(field), v.trim(), v.minLength(1, `${field} must not be empty`), v.maxLength(max, `${field} must be at most ${max} characters`));
const maxStr = (field: string, max: number) => v.pipe(str(field), v.maxLength(max, `${field} must be at most ${max} characters`));
const httpUrl = (field: string) =>
  v.pipe(str(field), v.trim(), v.url(`${field} must be an absolute http(s) URL`), v.check((s) => /^https?:\/\//i.test(s), `${field} must be an http(s) URL`));

const to = v.pipe(
  v.string('to is required: the recipient in international format with a leading +'),
  v.trim(),
  v.transform((s) => s.replace(/[\s\-().]/g, '')),
  v.regex(E164, 'to must be in international format with a leading + (for example +5215512345678)'),
);

const exactlyOne = (a: string, b: string, type: string) =>
  v.check((o: any) => (o[a] !== undefined) !== (o[b] !== undefined), `${type} needs exactly one of ${a} or ${b} (they are mutually exclusive)`);

const media = (type: MediaType) => {
  const caption = type === 'image' || type === 'video' || type === 'document'
    ? v.optional(maxStr(`${type}.caption`, MAX_CAPTION))
    : v.optional(v.never(`${type} does not support a caption (only image, video and document do)`));
  const filename = type === 'document'
    ? nonEmpty('document.filename', 240)
    : v.optional(v.never(`filename is only for documents`));
  return v.pipe(
    v.looseObject({
      link: v.optional(httpUrl(`${type}.link`)),
      id: v.optional(nonEmpty(`${type}.id`, 256)),
      caption,
      filename,
    }, `${type} must be an object with link or id`),
    exactlyOne('link', 'id', type),
  );
};

const location = v.looseObject({
  latitude: v.pipe(v.number('latitude is required and must be a number'), v.finite(), v.minValue(-90, 'latitude must be between -90 and 90'), v.maxValue(90, 'latitude must be between -90 and 90')),
  longitude: v.pipe(v.number('longitude is required and must be a number'), v.finite(), v.minValue(-180, 'longitude must be between -180 and 180'), v.maxValue(180, 'longitude must be between -180 and 180')),
  name: v.optional(maxStr('location.name', 1000)),
  address: v.optional(maxStr('location.address', 1000)),
}, 'location must be an object with latitude and longitude');

const reaction = v.looseObject({
  message_id: nonEmpty('reaction.message_id', 256),
  // An empty emoji removes the reaction.
  emoji: v.pipe(v.string('reaction.emoji is required (an empty string removes the reaction)'), v.maxLength(32, 'reaction.emoji must be a single emoji')),
}, 'reaction must be an object with message_id and emoji');

// ---- templates -------------------------------------------------------------------------------------
const mediaParam = (type: 'image' | 'video' | 'document') =>
  v.pipe(v.looseObject({ link: v.optional(httpUrl(`${type}.link`)), id: v.optional(nonEmpty(`${type}.id`, 256)), filename: v.optional(v.string()) }), exactlyOne('link', 'id', type));

const templateParam = v.variant('type', [
  v.looseObject({ type: v.literal('text'), text: v.pipe(v.string('text is required'), v.minLength(1, 'text must not be empty'), v.maxLength(32768)) }),
  v.looseObject({
    type: v.literal('currency'),
    currency: v.looseObject({
      fallback_value: v.string('currency.fallback_value is required'),
      code: v.pipe(v.string('currency.code is required'), v.regex(/^[A-Z]{3}$/, 'currency.code must be an ISO 4217 code such as MXN')),
      amount_1000: v.pipe(v.number('currency.amount_1000 must be an integer (amount x 1000)'), v.integer('currency.amount_1000 must be an integer (amount x 1000)')),
    }),
  }),
  v.looseObject({ type: v.literal('date_time'), date_time: v.looseObject({ fallback_value: v.string('date_time.fallback_value is required') }) }),
  v.looseObject({ type: v.literal('image'), image: mediaParam('image') }),
  v.looseObject({ type: v.literal('video'), video: mediaParam('video') }),
  v.looseObject({ type: v.literal('document'), document: mediaParam('document') }),
  v.looseObject({ type: v.literal('payload'), payload: v.pipe(v.string('payload is required'), v.maxLength(256)) }),
], 'parameter type must be text, currency, date_time, image, video, document or payload');

const buttonIndex = v.pipe(
  v.union([v.string(), v.number()], 'index is required: a string "0" to "9"'),
  v.transform((x) => String(x)),
  v.regex(/^[0-9]$/, 'index must be 0-9'),
);

const component = v.variant('type', [
  v.looseObject({ type: v.literal('header'), parameters: v.pipe(v.array(templateParam), v.maxLength(1, 'a header has one parameter')) }),
  v.looseObject({ type: v.literal('body'), parameters: v.optional(v.array(templateParam), []) }),
  v.pipe(
    v.looseObject({
      type: v.literal('button'),
      sub_type: v.picklist(['quick_reply', 'url', 'catalog', 'copy_code', 'flow'], 'sub_type must be quick_reply, url or catalog'),
      index: buttonIndex,
      parameters: v.optional(v.array(templateParam), []),
    }),
    // The contract: a URL button takes one text parameter (the URL's dynamic suffix); a catalog button none.
    v.check((b) => b.sub_type !== 'url' || (b.parameters.length === 1 && b.parameters[0].type === 'text'), 'a url button takes exactly one text parameter: the dynamic suffix of the button URL'),
    v.check((b) => b.sub_type !== 'catalog' || b.parameters.length === 0, 'a catalog button takes no parameters'),
  ),
], 'component type must be header, body or button');

const fullTemplate = v.looseObject({
  name: nonEmpty('template.name', 512),
  language: v.union([
    v.looseObject({ code: nonEmpty('template.language.code', 15), policy: v.optional(v.literal('deterministic', 'policy must be "deterministic"')) }),
    v.pipe(nonEmpty('template.language', 15), v.transform((code) => ({ code }))),
  ], 'template.language must be { code, policy? }'),
  components: v.optional(v.array(component, 'template.components must be an array'), []),
}, 'template must be an object with name, language and components');

const headerMedia = v.pipe(
  v.looseObject({
    type: v.picklist(['image', 'video', 'document'], 'header_media.type is required: image, video or document'),
    url: v.optional(nonEmpty('header_media.url', 2048)),
    media_id: v.optional(nonEmpty('header_media.media_id', 256)),
    filename: v.optional(v.string()),
  }, 'header_media must be an object'),
  v.check((h) => h.url !== undefined || h.media_id !== undefined, 'header_media needs url or media_id'),
);

// ---- interactive and contacts (the Cloud API's own payload shapes) --------------------------------
const interactiveHeader = v.variant('type', [
  v.looseObject({ type: v.literal('text'), text: nonEmpty('header.text', 60) }),
  v.looseObject({ type: v.literal('image'), image: mediaParam('image') }),
  v.looseObject({ type: v.literal('video'), video: mediaParam('video') }),
  v.looseObject({ type: v.literal('document'), document: mediaParam('document') }),
], 'header type must be text, image, video or document');
const ibody = v.looseObject({ text: nonEmpty('body.text', 1024) }, 'body.text is required');
const footer = v.optional(v.looseObject({ text: nonEmpty('footer.text', 60) }));

const interactive = v.variant('type', [
  v.looseObject({
    type: v.literal('button'),
    header: v.optional(interactiveHeader),
    body: ibody,
    footer,
    action: v.looseObject({
      buttons: v.pipe(
        v.array(v.looseObject({ type: v.literal('reply', 'button type must be reply'), reply: v.looseObject({ id: nonEmpty('reply.id', 256), title: nonEmpty('reply.title', 20) }) })),
        v.minLength(1, 'action.buttons needs 1 to 3 buttons'),
        v.maxLength(3, 'action.buttons needs 1 to 3 buttons'),
      ),
    }),
  }),
  v.looseObject({
    type: v.literal('list'),
    header: v.optional(v.looseObject({ type: v.literal('text', 'a list header must be text'), text: nonEmpty('header.text', 60) })),
    body: ibody,
    footer,
    action: v.pipe(
      v.looseObject({
        button: nonEmpty('action.button', 20),
        sections: v.pipe(
          v.array(v.looseObject({
            title: v.optional(maxStr('section.title', 24)),
            rows: v.pipe(
              v.array(v.looseObject({ id: nonEmpty('row.id', 200), title: nonEmpty('row.title', 24), description: v.optional(maxStr('row.description', 72)) })),
              v.minLength(1, 'a section needs at least one row'),
            ),
          })),
          v.minLength(1, 'action.sections needs 1 to 10 sections'),
          v.maxLength(10, 'action.sections needs 1 to 10 sections'),
        ),
      }),
      v.check((a) => a.sections.reduce((n, s) => n + s.rows.length, 0) <= 10, 'a list has at most 10 rows in total'),
    ),
  }),
  v.looseObject({
    type: v.literal('cta_url'),
    header: v.optional(interactiveHeader),
    body: ibody,
    footer,
    action: v.looseObject({
      name: v.literal('cta_url', 'action.name must be cta_url'),
      parameters: v.looseObject({ display_text: nonEmpty('display_text', 20), url: httpUrl('url') }),
    }),
  }),
  v.looseObject({
    type: v.literal('flow'),
    header: v.optional(interactiveHeader),
    body: ibody,
    footer,
    action: v.looseObject({
      name: v.literal('flow', 'action.name must be flow'),
      parameters: v.pipe(
        v.looseObject({
          flow_message_version: v.optional(v.literal('3'), '3'),
          flow_cta: nonEmpty('flow_cta', 30),
          flow_id: v.optional(nonEmpty('flow_id')),
          flow_name: v.optional(nonEmpty('flow_name')),
          flow_token: v.optional(v.string()),
          flow_action: v.optional(v.picklist(['navigate', 'data_exchange'])),
          flow_action_payload: v.optional(v.looseObject({})),
          mode: v.optional(v.picklist(['draft', 'published'])),
        }),
        v.check((p) => (p.flow_id !== undefined) !== (p.flow_name !== undefined), 'a flow needs exactly one of flow_id or flow_name'),
      ),
    }),
  }),
], 'interactive.type must be button, list, cta_url or flow');

const contactCard = v.looseObject({
  name: v.looseObject({ formatted_name: nonEmpty('name.formatted_name', 1000), first_name: v.optional(v.string()), last_name: v.optional(v.string()) }, 'name.formatted_name is required'),
  phones: v.optional(v.array(v.looseObject({ phone: v.optional(nonEmpty('phone')), type: v.optional(v.string()), wa_id: v.optional(v.string()) }))),
  emails: v.optional(v.array(v.looseObject({ email: v.optional(v.pipe(v.string(), v.email('email must be an email address'))), type: v.optional(v.string()) }))),
  urls: v.optional(v.array(v.looseObject({ url: v.optional(v.string()), type: v.optional(v.string()) }))),
  addresses: v.optional(v.array(v.looseObject({}))),
  org: v.optional(v.looseObject({})),
  birthday: v.optional(v.pipe(v.string(), v.regex(/^\d{4}-\d{2}-\d{2}$/, 'birthday must be YYYY-MM-DD'))),
});

const ai = v.optional(v.looseObject({
  pause: v.optional(v.boolean('ai.pause must be a boolean')),
  pauseDuration: v.optional(v.pipe(v.number('ai.pauseDuration must be a number of minutes'), v.integer('ai.pauseDuration must be whole minutes'), v.minValue(1, 'ai.pauseDuration must be 1 to 1440 minutes'), v.maxValue(1440, 'ai.pauseDuration must be at most 1440 minutes'))),
  disable: v.optional(v.boolean('ai.disable must be a boolean')),
}, 'ai must be an object'));

const common = {
  to,
  type: v.optional(v.picklist(MESSAGE_TYPES)),
  messaging_product: v.optional(v.literal('whatsapp', 'messaging_product must be "whatsapp"')),
  recipient_type: v.optional(v.literal('individual', 'only 1:1 chats are supported: recipient_type must be "individual"')),
  context: v.optional(v.looseObject({ message_id: nonEmpty('context.message_id', 256) })),
  ai,
  autoConvert: v.optional(v.boolean('autoConvert must be a boolean')),
  biz_opaque_callback_data: v.optional(maxStr('biz_opaque_callback_data', 512)),
};

const schemas: Record<MessageType, v.GenericSchema> = {
  text: v.pipe(
    v.looseObject({
      ...common,
      content: v.optional(nonEmpty('content', MAX_TEXT)),
      text: v.optional(v.looseObject({ body: nonEmpty('text.body', MAX_TEXT), preview_url: v.optional(v.boolean()) }, 'text must be an object with body')),
    }),
    v.check((b) => b.content !== undefined || b.text !== undefined, 'a text message needs content (service style) or text.body (upstream style)'),
  ),
  image: v.looseObject({ ...common, image: media('image') }),
  video: v.looseObject({ ...common, video: media('video') }),
  audio: v.looseObject({ ...common, audio: media('audio') }),
  document: v.looseObject({ ...common, document: media('document') }),
  sticker: v.looseObject({ ...common, sticker: media('sticker') }),
  location: v.looseObject({ ...common, location }),
  reaction: v.looseObject({ ...common, reaction }),
  interactive: v.looseObject({ ...common, interactive }),
  contacts: v.looseObject({ ...common, contacts: v.pipe(v.array(contactCard, 'contacts must be an array of contact cards'), v.minLength(1, 'contacts needs at least one contact card')) }),
  template: v.pipe(
    v.looseObject({
      ...common,
      template: v.optional(fullTemplate),
      templateName: v.optional(nonEmpty('templateName', 512)),
      template_parameters: v.optional(v.array(v.pipe(v.union([v.string(), v.number()], 'template_parameters must be strings'), v.transform(String)), 'template_parameters must be an array of strings')),
      language: v.optional(nonEmpty('language', 15)),
      header_media: v.optional(headerMedia),
      allowButtonIdOverride: v.optional(v.boolean('allowButtonIdOverride must be a boolean')),
    }),
    v.check((b) => (b.template !== undefined) !== (b.templateName !== undefined), 'a template message needs templateName (shortcut) or a template object, not both'),
  ),
};

export type SendRequest = Record<string, any> & { to: string; type: MessageType };

/** Validates a send request; throws the contract's 400 `validation_error` naming the fields. */
export function parseSendRequest(input: unknown): SendRequest {
  if (!input || typeof input !== 'object' || Array.isArray(input)) {
    throw validationError({ _body: ['The body must be a JSON object'] }, 'The body must be a JSON object');
  }
  const body = input as Record<string, any>;
  let type = body.type;
  if (type === undefined) {
    if (body.content !== undefined || body.text !== undefined) type = 'text';
    else if (typeof body.templateName === 'string' || body.template !== undefined) type = 'template';
    else throw invalid({ type: ['type is required for non-text messages (or give content for a text message)'] });
  }
  if (!(MESSAGE_TYPES as readonly string[]).includes(type)) {
    throw invalid({ type: [`type must be one of ${MESSAGE_TYPES.join(', ')}`] });
  }
  const parsed = v.safeParse(schemas[type as MessageType], body);
  if (!parsed.success) {
    const details = toFieldErrors(parsed.issues.map(namingMissingKey));
    // A check on the whole body has no path: name the field it is about.
    if (details._body) {
      const field = type === 'text' ? 'content' : type === 'template' ? 'templateName' : type;
      details[field] = [...(details[field] ?? []), ...details._body];
      delete details._body;
    }
    throw invalid(details);
  }
  return { ...(parsed.output as Record<string, any>), type } as SendRequest;
}

/** valibot words a missing key as the object's message ("Invalid key: Expected ..."): say which field is required. */
const namingMissingKey = <T extends v.BaseIssue<unknown>>(issue: T): T => {
  const path = v.getDotPath(issue);
  const missing = issue.kind === 'schema' && issue.received === 'undefined' && (issue.type === 'object' || issue.type === 'loose_object') && path;
  return missing ? { ...issue, message: `${path} is required` } : issue;
};

const invalid = (details: FieldErrors) => validationError(details, `Invalid message: ${summarize(details)}`);
