/**
 * Turns a template send (shortcut, shortcut with header media, or full `template` object) into the Cloud API
 * `template` object, checked against the business's approved template before anything goes upstream:
 * - placeholder count of the body (and a required media header) → 400 `invalid_template_parameters`;
 * - header media, in the shortcut and the full form, and the media of carousel cards (shared/media/embedded.ts): an id
 *   this service uploaded must not be expired (400 `media_expired`) and must be the sending number's (403
 *   `MEDIA_PERMISSION_DENIED` with a hint); any other id must be readable by the sending number upstream (same 403); an
 *   uploaded file must be of the kind it is named as (400 `unsupported_media_type`) and within its limit (413
 *   `media_too_large`); a link must be http(s) and must not name a private, loopback or metadata address (400
 *   `invalid_media_link`, before anything goes upstream);
 * - quick-reply payloads: the request's payload only with `allowButtonIdOverride`, else the template's configured
 *   button id, else `btn_{index}_{templateName}` (on the Cloud API's own endpoint, as the client sent them).
 * The shortcut's language is `es_MX` unless the request names one (`language`, a service extension); the full
 * form is sent as asked. A name or language the upstream does not know is answered 132000 by the upstream.
 */
import { ApiError } from '#shared/http/errors.ts';
import type { UpstreamTemplate } from '#shared/upstream/client.ts';
import { requireSendableEmbeddedMedia } from '#shared/media/embedded.ts';
import { templatesNamed, placeholders } from './catalog.ts';
import { isComponent } from './component-kind.ts';

export const DEFAULT_TEMPLATE_LANGUAGE = 'es_MX';

export interface TemplateObject {
  name: string;
  language: { code: string; policy?: 'deterministic' };
  /** Absent when there are none, unless the request itself sent an empty list (forwarded as sent). */
  components?: Record<string, any>[];
}

export interface PreparedTemplate {
  template: TemplateObject;
  /** The template's media header type when it has one (for the message record). */
  headerType?: string;
}

const looksLikeUrl = (s: string) => /^[a-z][a-z0-9+.-]*:\/\//i.test(s);

function fromShortcut(req: Record<string, any>): TemplateObject & { components: Record<string, any>[] } {
  const components: Record<string, any>[] = [];
  const header = req.header_media as Record<string, any> | undefined;
  if (header) {
    // A media id mistakenly placed in `url` is normalised to media_id.
    const mediaId = header.media_id ?? (header.url && !looksLikeUrl(header.url) ? header.url : undefined);
    const media: Record<string, unknown> = mediaId ? { id: mediaId } : { link: header.url };
    if (header.type === 'document' && header.filename) media.filename = header.filename;
    components.push({ type: 'header', parameters: [{ type: header.type, [header.type]: media }] });
  }
  const params: string[] = req.template_parameters ?? [];
  if (params.length) components.push({ type: 'body', parameters: params.map((text) => ({ type: 'text', text })) });
  return { name: req.templateName, language: { code: req.language ?? DEFAULT_TEMPLATE_LANGUAGE }, components };
}

const invalidParameters = (message: string, details: Record<string, unknown>) =>
  new ApiError(400, { error: 'invalid_template_parameters', message, details });

export async function prepareTemplate(
  business: { businessId: string; phoneNumberId: string; wabaId?: string },
  req: Record<string, any>,
  options: { quickRepliesAsSent?: boolean } = {},
): Promise<PreparedTemplate> {
  const shortcut = req.template === undefined;
  const template: TemplateObject & { components: Record<string, any>[] } = shortcut
    ? fromShortcut(req)
    : { ...req.template, name: req.template.name, language: req.template.language, components: req.template.components ?? [] };

  // The contract: the shortcut's language defaults to es_MX. A template approved only in another language is
  // not silently swapped in: the upstream answers 132000 (template_not_found, with the language tried).
  const named = business.wabaId ? await templatesNamed(business.businessId, business.wabaId, template.name) : undefined;
  const approved: UpstreamTemplate | undefined = named?.find((t) => t.language === template.language.code);

  let headerType: string | undefined;
  if (approved) {
    const context = { template_name: template.name, language: template.language.code };
    const body = approved.components.find((c) => String(c.type).toUpperCase() === 'BODY');
    const expected = placeholders(body?.text);
    const received = template.components.filter((c) => isComponent(c, 'body')).reduce((n, c) => n + (c.parameters?.length ?? 0), 0);
    if (expected !== received) {
      throw invalidParameters(`Template ${template.name} (${template.language.code}) has ${expected} body placeholder(s); ${received} parameter(s) given`, { ...context, expected, received });
    }
    const header = approved.components.find((c) => String(c.type).toUpperCase() === 'HEADER');
    // What the approved template does not have, the upstream refuses (132000 family): said here, before anything goes out.
    if (!header && template.components.some((c) => isComponent(c, 'header'))) {
      throw invalidParameters(`Template ${template.name} (${template.language.code}) has no header; send it without header_media or a header component`, { ...context, header: null });
    }
    const buttonCount = approved.components.find((c) => String(c.type).toUpperCase() === 'BUTTONS')?.buttons?.length ?? 0;
    const strayButton = template.components.find((c) => isComponent(c, 'button') && !(Number(c.index) >= 0 && Number(c.index) < buttonCount));
    if (strayButton) {
      throw invalidParameters(`Template ${template.name} (${template.language.code}) has ${buttonCount} button(s); there is none at index ${strayButton.index}`, { ...context, buttons: buttonCount, index: String(strayButton.index) });
    }
    const format = String(header?.format ?? 'TEXT').toLowerCase();
    if (header && ['image', 'video', 'document'].includes(format)) {
      headerType = format;
      const param = template.components.find((c) => isComponent(c, 'header'))?.parameters?.[0];
      const kind = `${format === 'image' ? 'an' : 'a'} ${format} header`;
      if (!param) throw invalidParameters(`Template ${template.name} needs ${kind}: give header_media or a header component`, { ...context, header: format });
      if (param.type !== format) throw invalidParameters(`Template ${template.name} needs ${kind}, got ${param.type}`, { ...context, header: format });
    }
  }
  if (!options.quickRepliesAsSent) template.components = resolveQuickReplies(template, approved, req.allowButtonIdOverride === true);

  // Header media, and the media of carousel cards.
  await requireSendableEmbeddedMedia(business.businessId, business.phoneNumberId, template.components);
  const { components, ...rest } = template;
  const keep = components.length > 0 || (!shortcut && Array.isArray(req.template.components));
  return { template: keep ? template : rest, headerType };
}

/** A quick-reply button component of a request (Meta takes its sub_type in either case). */
const isQuickReply = (c: Record<string, any>) => isComponent(c, 'button') && String(c.sub_type).toLowerCase() === 'quick_reply';

/**
 * Gives every quick-reply button of the template its payload, in the contract's order: the request's buttons keep
 * their place and form (only their payload is set), and the template's other quick-reply buttons follow.
 */
function resolveQuickReplies(template: { name: string; components: Record<string, any>[] }, approved: UpstreamTemplate | undefined, allowOverride: boolean): Record<string, any>[] {
  const requested = template.components;
  const quickReplies = new Map<string, Record<string, any> | undefined>();
  const buttons = approved?.components.find((c) => String(c.type).toUpperCase() === 'BUTTONS')?.buttons ?? [];
  buttons.forEach((b: Record<string, any>, i: number) => {
    if (String(b.type).toUpperCase() === 'QUICK_REPLY') quickReplies.set(String(i), b);
  });
  for (const c of requested) {
    if (isQuickReply(c) && !quickReplies.has(String(c.index))) quickReplies.set(String(c.index), undefined);
  }
  const payloadFor = (index: string, configured: Record<string, any> | undefined) => {
    const asked = requested.find((c) => isQuickReply(c) && String(c.index) === index)
      ?.parameters?.find((p: Record<string, any>) => p.type === 'payload')?.payload;
    if (allowOverride && typeof asked === 'string' && asked) return asked;
    const configuredId = configured?.payload ?? configured?.buttonId ?? configured?.button_id;
    if (typeof configuredId === 'string' && configuredId) return configuredId;
    return `btn_${index}_${template.name}`;
  };
  const payloadParameter = (index: string) => [{ type: 'payload', payload: payloadFor(index, quickReplies.get(index)) }];
  const asSent = requested.map((c) => (isQuickReply(c) ? { ...c, parameters: payloadParameter(String(c.index)) } : c));
  // A button the request gives at an index (of any kind) keeps it: no quick reply is added in its place.
  const added = [...quickReplies.keys()]
    .filter((index) => !requested.some((c) => isComponent(c, 'button') && String(c.index) === index))
    .sort((a, b) => Number(a) - Number(b))
    .map((index) => ({ type: 'button', sub_type: 'quick_reply', index, parameters: payloadParameter(index) }));
  return [...asSent, ...added];
}
