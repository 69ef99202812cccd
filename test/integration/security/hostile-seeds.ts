/**
 * Valid requests of every route, the starting points of hostile-input.test.ts: each one, sent as it is, is
 * accepted (or meets the not-found answer of a made-up id), so that a change to any part of it reaches the code that reads
 * that part. Free-form objects are filled in (custom fields, v3 filters, legacy rules, template components,
 * interactive and contact cards), since those are where client-chosen names and sizes go deepest.
 */
import { isCloudApiRoute } from '#shared/cloud-api/route-kind.ts';

export interface Seed {
  body?: unknown;
  /** Query parameters; an object value is sent as JSON (`filters`). */
  query?: Record<string, unknown>;
  params?: Record<string, string>;
  /** Statuses the unchanged seed answers, when not the route's usual success (or 404 for made-up ids). */
  expect?: number[];
  /** A starting point that is not valid as it is (a body the route takes in another form). */
  notValid?: true;
}

const TO = '+5215512345678';
const v3Filters = {
  name: { contains: 'Ana' }, tags: { any: ['vip'], none: ['spam'] }, created_at: { within_days: 30 },
  custom_fields: { city: 'Puebla', plan: { equals: 'gold' }, note: { contains: 'x' }, vip: { exists: true } },
  origin: ['api', 'inbound'], opted_out: false,
};
const legacyRules = {
  operator: 'AND',
  conditions: [
    { field: 'name', operator: 'contains', value: 'Ana' },
    { field: 'tags', operator: 'contains_any', value: ['vip', 'expo'] },
    { field: 'custom_fields.city', operator: 'equals', value: 'Puebla' },
  ],
};
const legacyV2 = { version: 2, operator: 'OR', groups: [legacyRules, { operator: 'AND', conditions: [{ field: 'created_at', operator: 'within_days', value: 7 }] }] };
const contact = { phone_number: '+5215599990001', name: 'Ana Ruiz', email: 'ana@example.com', tags: ['vip'], custom_fields: { city: 'Puebla', visits: 3, vip: true } };

const SEEDS: Record<string, Seed[]> = {
  'GET /webhooks/upstream': [{ query: { 'hub.mode': 'subscribe', 'hub.verify_token': 'sandbox-verify-token', 'hub.challenge': '42' } }],
  'POST /webhooks/upstream': [{ body: { object: 'whatsapp_business_account', entry: [{ id: 'waba', changes: [{ field: 'messages', value: { metadata: { phone_number_id: '1' }, statuses: [{ id: 'wamid.x', status: 'delivered', timestamp: '1700000000', recipient_id: '5215512345678' }] } }] }] }, expect: [401] }],
  'POST /messages/v1': [
    { body: { to: TO, content: 'Hola', ai: { pause: true, pauseDuration: 10 } } },
    { body: { messaging_product: 'whatsapp', to: TO, type: 'text', text: { body: 'Hola', preview_url: false } } },
    { body: { to: TO, type: 'location', location: { latitude: 19.43, longitude: -99.13, name: 'Tienda', address: 'Centro' } } },
    { body: { to: TO, type: 'template', templateName: 'order_update', template_parameters: ['Ana', '#1042'] } },
    { body: { to: TO, type: 'template', template: { name: 'order_update', language: { code: 'es_MX', policy: 'deterministic' }, components: [{ type: 'body', parameters: [{ type: 'text', text: 'Ana' }, { type: 'text', text: '#1042' }] }] } } },
    { body: { to: TO, type: 'interactive', interactive: { type: 'button', body: { text: '¿Confirmas?' }, action: { buttons: [{ type: 'reply', reply: { id: 'yes', title: 'Sí' } }, { type: 'reply', reply: { id: 'no', title: 'No' } }] } } } },
    { body: { to: TO, type: 'contacts', contacts: [{ name: { formatted_name: 'Ana Ruiz', first_name: 'Ana' }, phones: [{ phone: '+5215500000001', type: 'CELL' }], emails: [{ email: 'ana@example.com' }] }] } },
  ],
  'POST /messages/v1/{id}/retry': [{}],
  'PATCH /conversations/v1/{id}/ai': [{ body: { aiEnabled: true, aiMode: 'auto' }, notValid: true }],
  'POST /conversations/v1/{id}/ai/pause': [{ body: { duration: 30 } }],
  'POST /conversations/v1/{id}/close': [{}],
  'POST /agent/v1/pause': [{ body: { duration: 60 } }],
  'POST /agent/pause': [{ body: { duration: 60 } }],
  'POST /agent/v1/toggle': [{ body: { enabled: true } }],
  'POST /agent/toggle': [{ body: { enabled: true } }],
  'PATCH /agent/v1/settings': [{ body: { enabled: true, systemPrompt: 'Eres amable', handoffPauseMinutes: 30, debounceSeconds: 5 } }],
  'POST /media/v1': [{ body: { type: 'image' }, expect: [400, 415] }],
  'POST /media/v1/uploads': [{ body: { type: 'image', file_size: 1000, mime_type: 'image/jpeg' } }],
  'POST /media/v1/uploads/{id}/complete': [{}],
  'POST /funnel/v1/stages': [{ body: { name: 'Lead', color: '#10b981' } }],
  'PATCH /funnel/v1/stages/reorder': [{ body: { stage_ids: [crypto.randomUUID()] }, expect: [400, 404, 409] }],
  'PATCH /funnel/v1/stages/{id}': [{ body: { name: 'Won', color: '#10b981' } }],
  'POST /funnel/v1/contacts/{id}/move': [{ body: { stage_id: crypto.randomUUID() } }],
  'POST /contacts/v1': [{ body: contact }],
  'GET /contacts/v1': [{ query: { limit: '20', search: 'Ana', filters: v3Filters } }],
  'POST /contacts/v1/bulk': [
    { body: { operation: 'create', contacts: [{ ...contact, phone_number: '+5215599990002' }, { phone_number: '+5215599990003', name: 'Carlos', tags: ['expo'] }] } },
    { body: { operation: 'update', contacts: [{ id: crypto.randomUUID(), add_tags: ['expo'], custom_fields: { city: 'CDMX' } }] } },
    { body: { operation: 'add_tags', contact_ids: [crypto.randomUUID()], tags: ['expo'] } },
  ],
  'PATCH /contacts/v1/{id}': [{ body: { name: 'Bea', tags: ['vip', 'wholesale'], custom_fields: { city: 'León', visits: null } } }],
  'GET /segments': [{ query: { limit: '10' } }],
  'POST /segments': [
    { body: { name: 'Expo', type: 'dynamic', rules: { version: 3, filters: v3Filters } } },
    { body: { name: 'Legacy', type: 'dynamic', rules: legacyV2 } },
    { body: { name: 'Call back', type: 'static', description: 'x', color: '#ff0000' } },
  ],
  'POST /segments/preview': [{ body: { rules: { version: 3, filters: v3Filters } } }, { body: { rules: legacyRules } }, { body: { rules: legacyV2 } }],
  'GET /segments/{id}': [{ query: { limit: '10', offset: '0' } }],
  'PATCH /segments/{id}': [{ body: { name: 'Renamed', rules: { version: 3, filters: v3Filters } } }],
  'POST /segments/{id}/contacts': [{ body: { contactIds: [crypto.randomUUID()] } }],
  'POST /segments/{id}/members': [{ body: { action: 'add', filters: { ...v3Filters, segment_id: crypto.randomUUID() }, search: 'Ana' } }, { body: { action: 'remove', contactIds: [crypto.randomUUID()] } }],
  'POST /user-webhooks': [{ body: { name: 'CRM sync', url: 'http://127.0.0.1:4000/hooks', events: ['message.received', 'message.sent'] } }],
  'PATCH /user-webhooks/{id}': [{ body: { name: 'CRM', url: 'http://127.0.0.1:4000/hooks2', events: ['*'], enabled: false } }],
  'POST /broadcasts/v1': [
    { body: { name: 'Expo', templateName: 'order_update', language: 'es_MX', template_parameters: ['{{contact.first_name|cliente}}', '{{custom_fields.city}}'], contact_ids: [crypto.randomUUID()], send_at: new Date(Date.now() + 86_400_000).toISOString() } },
    { body: { name: 'Full', template: { name: 'order_update', language: { code: 'es_MX' }, components: [{ type: 'body', parameters: [{ type: 'text', text: '{{contact.name}}' }, { type: 'text', text: '#1' }] }] }, audience: { segment_id: crypto.randomUUID() } }, expect: [400, 404] },
  ],
  'GET /broadcasts/v1': [{ query: { limit: '10', status: 'scheduled' } }],
};

/** The seeds of a route: its own, or the empty request of its method (its query and body still get changed). */
export const seedsFor = (key: string): Seed[] => {
  const own = SEEDS[key];
  if (own) return own;
  const [method, path] = key.split(' ') as [string, string];
  // Made-up ids: the service's 404 (a made-up version makes no Graph path), or on a versionless Cloud API route
  // Graph's unknown object (400, code 100, subcode 33).
  const usual = path.includes('{') ? [isCloudApiRoute(key) && !path.includes('{version}') ? 400 : 404] : undefined;
  if (method === 'GET' || method === 'DELETE') return [{ query: {}, ...(usual ? { expect: usual } : {}) }];
  return [{ body: {}, notValid: true }];
};
