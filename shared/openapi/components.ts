/**
 * The contract's resources and error bodies as JSON Schema (service-interface.md "Resources and their fields",
 * "Errors" and decisions.md), referenced from the generated document as `#/components/schemas/<Name>`.
 * Request bodies come from the handlers' valibot schemas; these describe what the service answers.
 */
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
      phone_number: { type: 'string', description: 'international format with a leading +' },
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
      results: { type: 'array', items: obj({ success: bool, contact_id: nullable(uuid), phone_number: str, error: str, existing_contact_id: uuid }, ['success']) },
    },
    ['operation', 'success_count', 'error_count', 'results'],
  ),
  Success: obj({ success: bool, id: str }, ['success']),
};

/** Success body per operation (`METHOD /path` → status → schema); operations not listed answer a JSON object. */
export const successBodies: Record<string, Record<number, unknown>> = {
  'POST /messages/v1': { 200: ref('SendResult'), 202: ref('SendResult') },
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
  'POST /segments/preview': { 200: obj({ data: obj({ count: int, preview: { type: 'array', items: ref('Contact') } }, ['count']) }, ['data']) },
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
  obj({ message_id: uuid, wamid: nullable(str), conversation_id: uuid, contact_id: uuid, phone_number: str, direction: { type: 'string', enum: ['inbound', 'outbound'] }, type: str, status: str, sent_by: str, ...extra }, ['message_id']);

/** `data` of each webhook event: the contract's shapes, and what the service emits for the rest. */
export const eventData: Record<string, unknown> = {
  'message.received': obj(
    { messages: { type: 'array', items: obj({ id: str, from: str, type: str, timestamp: str, text: obj({ body: str }) }, ['id', 'from']) }, message_id: uuid, conversation_id: uuid, contact_id: uuid },
    ['messages'],
    { description: 'The message in the upstream (WhatsApp Cloud API) format, plus the service ids.' },
  ),
  'message.sent': messageEvent({ sent_at: time, content: {}, broadcast_id: uuid, retried_at: time }),
  'message.delivered': messageEvent({ delivered_at: time }),
  'message.read': messageEvent({ read_at: time }),
  'message.failed': messageEvent({ failed_at: time, error: obj({ code: str, error: str, message: str }) }),
  'conversation.created': obj({ conversation_id: uuid, contact_id: uuid }, ['conversation_id']),
  'conversation.assigned': obj({ conversation_id: uuid, contact_id: uuid, agent_id: uuid, previous_agent_id: nullable(uuid), assigned_at: time }, ['conversation_id', 'agent_id']),
  'conversation.unassigned': obj({ conversation_id: uuid, contact_id: uuid, previous_agent_id: nullable(uuid), unassigned_at: time }, ['conversation_id']),
  'conversation.closed': obj({ conversation_id: uuid, contact_id: uuid, closed_at: time }, ['conversation_id']),
  'contact.created': obj({ contact_id: uuid, phone_number: str, contact: ref('Contact'), created_at: time }, ['contact_id']),
  'contact.updated': obj({ contact_id: uuid, phone_number: str, changed_fields: { type: 'array', items: str }, contact: ref('Contact'), updated_at: time }, ['contact_id']),
  'contact.deleted': obj({ contact_id: uuid, phone_number: str, deleted_at: time }, ['contact_id']),
  'contact.stage_changed': obj(
    { contact_id: uuid, phone_number: str, previous_stage_id: nullable(uuid), previous_stage_name: nullable(str), new_stage_id: nullable(uuid), new_stage_name: nullable(str), moved_at: time },
    ['contact_id', 'previous_stage_id', 'new_stage_id', 'moved_at'],
  ),
  'broadcast.sent': obj({ broadcast_id: uuid, status: { const: 'running' }, recipients: int, skipped: int, started_at: time }),
  'broadcast.completed': obj({ broadcast_id: uuid, status: { const: 'completed' }, counts: { type: 'object' }, started_at: time, completed_at: time }),
  'broadcast.failed': obj({ broadcast_id: uuid, status: { const: 'failed' }, error: {}, counts: { type: 'object' }, failed_at: time }),
  'funnel_stage.created': obj({ stage_id: uuid, name: str, position: int, color: str, created_at: time }, ['stage_id', 'name', 'position', 'color', 'created_at']),
  'funnel_stage.updated': obj({ stage_id: uuid, name: str, color: str, updated_at: time }, ['stage_id', 'name', 'color', 'updated_at']),
  'funnel_stage.deleted': obj({ stage_id: uuid, name: str, deleted_at: time }, ['stage_id']),
  'funnel_stages.reordered': obj({ stage_ids: { type: 'array', items: uuid }, reordered_at: time }, ['stage_ids', 'reordered_at']),
};
