/**
 * The contract's resources and error bodies as JSON Schema (service-interface.md "Resources and their fields",
 * "Errors" and decisions.md), referenced from the generated document as `#/components/schemas/<Name>`.
 * Request bodies come from the handlers' valibot schemas; these describe what the service answers.
 */
import { cloudApiExamples, cloudApiSchemas, cloudApiSuccess, orReadReceipt } from './cloud-api.ts';
import { isCloudApiRoute } from '#shared/cloud-api/route-kind.ts';
const str = { type: 'string' } as const;
const uuid = { type: 'string', format: 'uuid' } as const;
const time = { type: 'string', format: 'date-time' } as const;
const int = { type: 'integer' } as const;
const bool = { type: 'boolean' } as const;
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const obj = (properties: Record<string, unknown>, required: string[] = [], extra: Record<string, unknown> = {}) => ({ type: 'object', properties, ...(required.length ? { required } : {}), ...extra });
/** `type: [T, 'null']` rather than anyOf: the docs renderer (Scalar) mis-validates compositions. */
const nullable = (schema: Record<string, unknown>): Record<string, unknown> => ({
  ...schema,
  type: [schema.type ?? 'string', 'null'],
  ...(Array.isArray(schema.enum) ? { enum: [...schema.enum, null] } : {}),
});

export const schemas: Record<string, unknown> = {
  ...cloudApiSchemas,
  Error: obj({ error: str, message: str, details: {} }, ['error'], { description: 'Simple error `{ error, message }`; some areas add fields (details, existing_contact_id, contact_count, invalid_ids...).' }),
  ValidationError: obj(
    { error: { const: 'validation_error' }, message: str, details: { type: 'object', additionalProperties: { type: 'array', items: str } } },
    ['error', 'message'],
    { description: 'Invalid body, query or path: `details` maps each field to its messages.' },
  ),
  SegmentFormatError: obj(
    { error: str, details: { type: 'array', items: obj({ field: str, message: str }) } },
    ['error'],
    { description: "Segment endpoints: `{ error: 'Datos inválidos', details: [...] }` for format errors, `{ error }` for rule errors." },
  ),
  DeliveryFailure: obj(
    {
      error: str,
      message: str,
      code: { type: 'string', description: 'upstream delivery code, e.g. 131047 (24-hour window closed), 132000 (template not found)' },
      action_required: str,
      instructions: str,
      details: { type: 'object' },
      data: obj({ id: uuid, status: { const: 'failed' }, conversationId: uuid, messageType: str, direction: str, createdAt: time }, ['id', 'status']),
    },
    ['error', 'message'],
    { description: 'A send the upstream rejected: the message is stored as failed and can be retried with POST /messages/v1/{id}/retry.' },
  ),
  MediaTooLarge: obj(
    { error: { const: 'media_too_large' }, message: str, suggestion: str, limits: obj({ image: str, video: str, audio: str, document: str }) },
    ['error', 'message'],
  ),
  RateLimited: obj({ error: { const: 'rate_limited' }, message: str, retry_after: { type: 'integer', description: 'seconds' } }, ['error', 'message', 'retry_after']),
  SendResult: obj(
    {
      messaging_product: { const: 'whatsapp' },
      contacts: { type: 'array', items: obj({ input: str, wa_id: str }, ['input', 'wa_id']) },
      messages: { type: 'array', items: obj({ id: uuid, wamid: str }, ['id']) },
      data: obj(
        {
          id: uuid,
          conversationId: uuid,
          messageType: str,
          direction: { const: 'outbound' },
          status: { type: 'string', enum: ['sent', 'delivered', 'read', 'failed', 'queued'] },
          createdAt: time,
          metadata: obj({ originalType: str, wasConverted: bool, reason: str }),
        },
        ['id', 'status'],
      ),
    },
    ['data'],
  ),
  RetryResult: obj({ message: str, data: obj({ id: uuid, messageId: str, status: str, retriedAt: time }, ['id', 'status']) }, ['data']),
  UploadedMedia: obj({ media_id: str, mime_type: str, file_size: int, type: { type: 'string', enum: ['image', 'video', 'audio', 'document', 'sticker'] } }, ['media_id', 'mime_type', 'file_size', 'type']),
  FunnelStage: obj(
    { id: uuid, name: { type: 'string', minLength: 1, maxLength: 100 }, position: int, color: { type: 'string', pattern: '^#[0-9A-Fa-f]{6}$' }, contact_count: int, created_at: time, updated_at: time },
    ['id', 'name', 'position', 'color'],
  ),
  StageRef: nullable(obj({ id: uuid, name: str }, ['id', 'name'])),
  MoveResult: obj({ contact_id: uuid, previous_stage: ref('StageRef'), new_stage: ref('StageRef'), moved_at: time }, ['contact_id', 'moved_at']),
  Contact: obj(
    {
      id: uuid,
      phone_number: nullable({ type: 'string', description: 'international format with a leading +; null only for a customer who wrote by username and never shared a number' }),
      whatsapp_user_id: { type: 'string', description: "the customer's WhatsApp business-scoped user id; present only on a contact known by username, without a number" },
      name: nullable(str),
      email: nullable(str),
      tags: { type: 'array', items: str },
      custom_fields: { type: 'object' },
      assigned_agent_id: nullable(uuid),
      funnel_stage_id: nullable(uuid),
      created_at: time,
      updated_at: time,
    },
    ['id', 'phone_number'],
  ),
  TeamAgent: obj({ id: uuid, name: nullable(str), email: str, role: { type: 'string', enum: ['super_admin', 'admin', 'agent'] }, is_available: bool, assigned_conversations: int }, ['id', 'email', 'role']),
  AiSettings: obj({ aiEnabled: bool, aiMode: str, aiPausedUntil: nullable(time) }, ['aiEnabled']),
  PauseResult: obj({ success: bool, pausedUntil: nullable(time), message: str }, ['success']),
  Segment: obj(
    {
      id: uuid,
      name: str,
      description: nullable(str),
      color: nullable(str),
      type: { type: 'string', enum: ['static', 'dynamic'] },
      contactCount: { type: 'number' },
      rules: nullable({ type: 'object', description: 'v3 { version: 3, filters } or legacy v1/v2 rules; null for static segments' }),
      rulesFormat: nullable({ type: 'string', enum: ['filters', 'legacy'] }),
      filters: nullable({ type: 'object' }),
      countStale: bool,
      rulesError: str,
      typeChangeIgnored: bool,
    },
    ['id', 'name', 'type'],
  ),
  MembersResult: obj({ data: obj({ action: { type: 'string', enum: ['add', 'remove'] }, affected: int, contactIds: { type: 'array', items: uuid }, contactCount: { type: 'number' }, countStale: bool }, ['action', 'affected']) }, ['data']),
  WebhookSubscription: obj(
    { id: uuid, name: str, url: { type: 'string', format: 'uri' }, events: { type: 'array', items: str }, secret: { type: 'string', description: 'shown on create and regenerate only' }, enabled: bool, createdAt: time },
    ['id', 'name', 'url', 'events'],
  ),
  BulkResult: obj(
    {
      operation: { type: 'string', enum: ['create', 'update', 'delete', 'add_tags', 'remove_tags', 'set_funnel_stage'] },
      success_count: int,
      error_count: int,
      results: { type: 'array', items: obj({ success: bool, contact_id: nullable(uuid), phone_number: nullable(str), error: str, existing_contact_id: uuid }, ['success']) },
    },
    ['operation', 'success_count', 'error_count', 'results'],
  ),
  Success: obj({ success: bool, id: str }, ['success']),
};

/** Success body per operation (`METHOD /path` → status → schema); operations not listed answer a JSON object. */
export const successBodies: Record<string, Record<number, unknown>> = {
  ...cloudApiSuccess,
  'POST /messages/v1': { 200: { anyOf: [ref('SendResult'), ref('ReadReceiptResult')] }, 202: ref('SendResult') },
  'POST /messages/v1/{id}/retry': { 200: ref('RetryResult') },
  'POST /media/v1': { 200: ref('UploadedMedia') },
  'POST /media/v1/uploads/{id}/complete': { 200: ref('UploadedMedia') },
  'GET /team/v1': { 200: obj({ agents: { type: 'array', items: ref('TeamAgent') } }, ['agents']) },
  'GET /funnel/v1/stages': { 200: obj({ stages: { type: 'array', items: ref('FunnelStage') } }, ['stages']) },
  'POST /funnel/v1/stages': { 201: obj({ stage: ref('FunnelStage') }, ['stage']) },
  'GET /funnel/v1/stages/{id}': { 200: obj({ stage: ref('FunnelStage') }, ['stage']) },
  'PATCH /funnel/v1/stages/{id}': { 200: obj({ stage: ref('FunnelStage') }, ['stage']) },
  'DELETE /funnel/v1/stages/{id}': { 200: ref('Success') },
  'PATCH /funnel/v1/stages/reorder': { 200: obj({ success: bool, stages: { type: 'array', items: ref('FunnelStage') } }, ['success', 'stages']) },
  'POST /funnel/v1/contacts/{id}/move': { 200: ref('MoveResult') },
  'POST /contacts/v1': { 201: obj({ contact: ref('Contact') }, ['contact']) },
  'GET /contacts/v1': { 200: obj({ contacts: { type: 'array', items: ref('Contact') }, next_cursor: nullable(str) }, ['contacts']) },
  'GET /contacts/v1/{id}': { 200: obj({ contact: ref('Contact') }, ['contact']) },
  'PATCH /contacts/v1/{id}': { 200: obj({ contact: ref('Contact') }, ['contact']) },
  'DELETE /contacts/v1/{id}': { 200: ref('Success') },
  'POST /contacts/v1/bulk': { 200: ref('BulkResult'), 207: ref('BulkResult') },
  'PATCH /conversations/v1/{id}/ai': { 200: obj({ message: str, settings: ref('AiSettings') }, ['settings']) },
  'POST /conversations/v1/{id}/ai/pause': { 200: ref('PauseResult') },
  'POST /agent/v1/pause': { 200: ref('PauseResult') },
  'POST /agent/pause': { 200: ref('PauseResult') },
  'POST /agent/v1/toggle': { 200: obj({ success: bool, enabled: bool }, ['success', 'enabled']) },
  'POST /agent/toggle': { 200: obj({ success: bool, enabled: bool }, ['success', 'enabled']) },
  'GET /agent/v1/status': { 200: obj({ enabled: bool, pausedUntil: nullable(time) }, ['enabled']) },
  'GET /segments': { 200: obj({ data: { type: 'array', items: ref('Segment') } }, ['data']) },
  'POST /segments': { 201: obj({ data: ref('Segment') }, ['data']) },
  'GET /segments/{id}': { 200: obj({ data: ref('Segment') }, ['data']) },
  'PATCH /segments/{id}': { 200: obj({ data: ref('Segment') }, ['data']) },
  'POST /segments/preview': { 200: obj({ data: obj({ count: int, countEstimated: { ...bool, description: 'present (true) when the count is estimated from a uniform sample (a business of more than 32,000 contacts)' }, preview: { type: 'array', items: ref('Contact') } }, ['count']) }, ['data']) },
  'POST /segments/{id}/members': { 200: ref('MembersResult') },
  'POST /segments/{id}/contacts': { 200: ref('MembersResult') },
  'DELETE /segments/{id}/contacts/{contactId}': { 200: ref('MembersResult') },
  'POST /user-webhooks': { 201: obj({ data: ref('WebhookSubscription') }, ['data']) },
  'GET /user-webhooks': { 200: obj({ data: { type: 'array', items: ref('WebhookSubscription') } }, ['data']) },
  'GET /user-webhooks/{id}': { 200: obj({ data: ref('WebhookSubscription') }, ['data']) },
  'PATCH /user-webhooks/{id}': { 200: obj({ data: ref('WebhookSubscription') }, ['data']) },
  'POST /user-webhooks/{id}/regenerate-secret': { 200: obj({ data: ref('WebhookSubscription') }, ['data']) },
  'DELETE /user-webhooks/{id}': { 200: ref('Success') },
};

/** The error body schema of a status on an operation: the area's own shapes where the contract gives them. */
export function errorBody(routeKey: string, status: number): unknown {
  if (isCloudApiRoute(routeKey)) return ref('GraphError');
  const segments = routeKey.includes(' /segments');
  if (status === 429) return ref('RateLimited');
  if (status === 413) return routeKey === 'POST /messages/v1' || routeKey.startsWith('POST /media') ? ref('MediaTooLarge') : ref('Error');
  // Alternatives are inlined (with a title), not $refs: Scalar flags compositions of $refs as invalid.
  const inline = (name: string) => ({ title: name, ...(schemas[name] as object) });
  if (status === 400) {
    const options = [inline('ValidationError'), inline('Error')];
    if (segments) options.push(inline('SegmentFormatError'));
    if (routeKey === 'POST /messages/v1' || routeKey === 'POST /messages/v1/{id}/retry') options.push(inline('DeliveryFailure'));
    return { anyOf: options };
  }
  if (routeKey === 'POST /messages/v1' && status >= 400) return { anyOf: [inline('DeliveryFailure'), inline('Error')] };
  return ref('Error');
}

const messageEvent = (extra: Record<string, unknown> = {}) =>
  obj({ message_id: uuid, wamid: nullable(str), conversation_id: uuid, contact_id: uuid, phone_number: str, direction: { type: 'string', enum: ['inbound', 'outbound'] }, type: str, status: str, sent_by: str, broadcast_id: { ...uuid, description: 'the broadcast that sent the message, when one did' }, ...extra }, ['message_id']);

/** `data` of each webhook event: the contract's shapes, and what the service emits for the rest. */
export const eventData: Record<string, unknown> = {
  'message.received': obj(
    { messages: { type: 'array', items: obj({ id: str, from: str, type: str, timestamp: str, text: obj({ body: str }) }, ['id', 'from']) }, message_id: uuid, conversation_id: uuid, contact_id: uuid },
    ['messages'],
    { description: 'The message in the upstream (WhatsApp Cloud API) format, plus the service ids.' },
  ),
  'message.sent': messageEvent({ sent_at: time, content: {}, retried_at: time }),
  'message.delivered': messageEvent({ delivered_at: time }),
  'message.read': messageEvent({ read_at: time }),
  'message.failed': messageEvent({ failed_at: time, error: obj({ code: str, error: str, message: str }) }),
  'conversation.created': obj({ conversation_id: uuid, contact_id: uuid }, ['conversation_id']),
  'conversation.assigned': obj({ conversation_id: uuid, contact_id: uuid, agent_id: uuid, previous_agent_id: nullable(uuid), assigned_at: time }, ['conversation_id', 'agent_id']),
  'conversation.unassigned': obj({ conversation_id: uuid, contact_id: uuid, agent_id: { type: 'null' }, previous_agent_id: nullable(uuid), unassigned_at: time }, ['conversation_id']),
  'conversation.closed': obj({ conversation_id: uuid, contact_id: uuid, closed_at: time }, ['conversation_id']),
  'contact.created': obj({ contact_id: uuid, phone_number: str, contact: ref('Contact'), created_at: time }, ['contact_id']),
  'contact.updated': obj({ contact_id: uuid, phone_number: str, changed_fields: { type: 'array', items: str }, contact: ref('Contact'), updated_at: time }, ['contact_id']),
  'contact.deleted': obj({ contact_id: uuid, phone_number: str, deleted_at: time }, ['contact_id']),
  'contact.stage_changed': obj(
    { contact_id: uuid, phone_number: str, previous_stage_id: nullable(uuid), previous_stage_name: nullable(str), new_stage_id: nullable(uuid), new_stage_name: nullable(str), moved_at: time },
    ['contact_id', 'previous_stage_id', 'new_stage_id', 'moved_at'],
  ),
  'broadcast.sent': obj({ broadcast_id: uuid, status: { const: 'running' }, recipients: int, skipped: int, started_at: time }),
  'broadcast.completed': obj({ broadcast_id: uuid, status: { type: 'string', enum: ['completed', 'cancelled'] }, counts: { type: 'object' }, started_at: nullable(time), completed_at: time, cancelled_at: time }),
  'broadcast.failed': obj({ broadcast_id: uuid, status: { const: 'failed' }, error: {}, counts: { type: 'object' }, failed_at: time }),
  'funnel_stage.created': obj({ stage_id: uuid, name: str, position: int, color: str, created_at: time }, ['stage_id', 'name', 'position', 'color', 'created_at']),
  'funnel_stage.updated': obj({ stage_id: uuid, name: str, color: str, updated_at: time }, ['stage_id', 'name', 'color', 'updated_at']),
  'funnel_stage.deleted': obj({ stage_id: uuid, name: str, deleted_at: time }, ['stage_id']),
  'funnel_stages.reordered': obj({ stage_ids: { type: 'array', items: uuid }, reordered_at: time }, ['stage_ids', 'reordered_at']),
  'webhook.test': obj({ webhook_id: uuid, message: str, sent_at: time }, ['webhook_id', 'message', 'sent_at']),
};

const media = obj({ link: { type: 'string', format: 'uri' }, id: { type: 'string', description: 'media_id from POST /media/v1' }, caption: { type: 'string', maxLength: 1024 }, filename: { type: 'string', description: 'document only' } }, [], { description: 'exactly one of link or id' });
const templateParam = { type: 'object', properties: { type: { type: 'string', enum: ['text', 'currency', 'date_time', 'image', 'video', 'document', 'location', 'payload', 'coupon_code', 'action', 'product', 'limited_time_offer', 'tap_target_configuration', 'order_status'] } }, required: ['type'] };

/** Request bodies of handlers that parse their body themselves (no valibot `body` in their spec). */
export const requestBodies: Record<string, { schema: unknown; examples?: Record<string, { summary: string; value: unknown }> }> = {
  'POST /messages/v1': {
    schema: orReadReceipt(obj(
      {
        to: { type: 'string', description: 'recipient in international format with a leading + (upstream style also takes digits only)' },
        type: { type: 'string', enum: ['text', 'image', 'video', 'audio', 'document', 'sticker', 'template', 'interactive', 'location', 'contacts', 'reaction'], description: 'required except for text' },
        content: { type: 'string', description: 'text, service style' },
        messaging_product: { type: 'string', const: 'whatsapp', description: 'upstream (Cloud API) style' },
        text: obj({ body: str, preview_url: bool }, ['body']),
        image: media, video: media, audio: media, document: media, sticker: media,
        autoConvert: { type: 'boolean', default: false, description: 'media: compress or send as a document when over the limit instead of 413 media_too_large' },
        templateName: { type: 'string', description: 'template shortcut' },
        template_parameters: { type: 'array', items: str, description: 'body placeholder values in order' },
        language: { type: 'string', default: 'es_MX' },
        header_media: obj({ type: { type: 'string', enum: ['image', 'video', 'document'] }, url: str, media_id: str }, ['type']),
        allowButtonIdOverride: { type: 'boolean', default: false },
        template: obj(
          {
            name: str,
            language: obj({ code: str, policy: { type: 'string', const: 'deterministic' } }, ['code']),
            components: { type: 'array', items: obj({ type: { type: 'string', description: 'header, body, button, or another Cloud API component (carousel...)' }, sub_type: { type: 'string', description: 'quick_reply, url, catalog / CATALOG, copy_code, flow, mpm, voice_call... (any Cloud API kind)' }, index: { type: ['string', 'integer'], pattern: '^[0-9]$' }, parameters: { type: 'array', items: templateParam } }, ['type']) },
          },
          ['name', 'language'],
        ),
        location: obj({ latitude: { type: 'number', minimum: -90, maximum: 90 }, longitude: { type: 'number', minimum: -180, maximum: 180 }, name: { type: 'string', maxLength: 1000 }, address: { type: 'string', maxLength: 1000 } }, ['latitude', 'longitude']),
        reaction: obj({ message_id: { type: 'string', description: 'wamid or service message id' }, emoji: { type: 'string', description: 'empty string removes the reaction' } }, ['message_id', 'emoji']),
        interactive: { type: 'object', description: 'Cloud API interactive object: button, list, cta_url, flow, product, product_list, catalog_message, order_details, order_status, location_request_message, or a later kind' },
        contacts: { type: 'array', items: { type: 'object' }, description: 'upstream contact cards' },
        ai: obj({ pause: bool, pauseDuration: { type: 'number', minimum: 1, maximum: 1440, default: 5 }, disable: { type: 'boolean', description: 'disable the AI permanently in this conversation' } }),
      },
      ['to'],
      { description: 'Service style (`to` + `content`, shortcuts) or upstream style (`messaging_product`, `to`, `type`, `<type>` object: any message the Cloud API documents; see RULES.md in shared/messages/schema). At most 64 KB (413 payload_too_large). Send an `Idempotency-Key` header to make retries safe.' },
    )),
    examples: {
      text: { summary: 'Text (service style)', value: { to: '+5215512345678', content: 'Hola', ai: { pause: true, pauseDuration: 10 } } },
      upstream: { summary: 'Text (upstream style)', value: { messaging_product: 'whatsapp', to: '+5215512345678', type: 'text', text: { body: 'Hola' } } },
      image: { summary: 'Image by link', value: { to: '+5215512345678', type: 'image', image: { link: 'https://example.com/p.jpg', caption: 'Catálogo' }, autoConvert: true } },
      document: { summary: 'Document by media id', value: { to: '+5215512345678', type: 'document', document: { id: '<media_id>', filename: 'factura.pdf' } } },
      template: { summary: 'Template shortcut', value: { to: '+5215512345678', type: 'template', templateName: 'order_update', template_parameters: ['Ana', '#1042'] } },
      templateFull: { summary: 'Template, full form', value: { to: '+5215512345678', type: 'template', template: { name: 'reminder_buttons', language: { code: 'es_MX', policy: 'deterministic' }, components: [{ type: 'body', parameters: [{ type: 'text', text: 'mañana' }] }] } } },
      location: { summary: 'Location', value: { to: '+5215512345678', type: 'location', location: { latitude: 19.4326, longitude: -99.1332, name: 'Tienda' } } },
      reaction: { summary: 'Reaction', value: { to: '+5215512345678', type: 'reaction', reaction: { message_id: '<wamid or id>', emoji: '👍' } } },
      ...cloudApiExamples,
    },
  },
  'PATCH /segments/{id}': {
    schema: obj({ name: str, description: str, color: str, rules: { type: 'object', description: 'v3 { version: 3, filters } or legacy v1/v2; dynamic segments only' }, type: { type: 'string', description: 'ignored (typeChangeIgnored: true in the answer when different)' } }),
  },
  'POST /segments/{id}/contacts': {
    schema: obj({ contactIds: { type: 'array', items: uuid, minItems: 1, maxItems: 10000 } }, ['contactIds']),
  },
  'POST /segments/{id}/members': {
    schema: obj(
      {
        action: { type: 'string', enum: ['add', 'remove'] },
        contactIds: { type: 'array', items: uuid, minItems: 1, maxItems: 10000 },
        search: { type: 'string', minLength: 1, maxLength: 200 },
        filters: { type: 'object', description: 'contact advanced search filters (may include segment_id)' },
      },
      ['action'],
      { additionalProperties: false, description: 'Exactly one selection form: contactIds, or search and/or filters (at most 50000 contacts).' },
    ),
  },
};
