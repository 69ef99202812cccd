/**
 * The Cloud-API-compatible routes (`/{version}/...`) in the OpenAPI document: Meta's own bodies, so that a Cloud
 * API client's author can see what the service answers. Rules of the message body: shared/messages/schema/RULES.md.
 */
const str = { type: 'string' } as const;
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const obj = (properties: Record<string, unknown>, required: string[] = [], extra: Record<string, unknown> = {}) => ({ type: 'object', properties, ...(required.length ? { required } : {}), ...extra });

export const cloudApiSchemas: Record<string, unknown> = {
  GraphError: obj(
    {
      error: obj(
        { message: str, type: str, code: { type: 'integer', description: "Meta's code: 100 invalid parameter, 190 bad token, 10 permission, 130429 rate limit, or the upstream's (131047, 132000...)" }, error_data: obj({ messaging_product: { const: 'whatsapp' }, details: str }), fbtrace_id: str },
        ['message', 'type', 'code'],
      ),
    },
    ['error'],
    { description: 'Graph API error body, with the HTTP status Meta uses (400, 401, 403, 404, 429, 500).' },
  ),
  CloudSendResult: obj(
    {
      messaging_product: { const: 'whatsapp' },
      contacts: { type: 'array', items: obj({ input: str, wa_id: str }) },
      messages: { type: 'array', items: obj({ id: { type: 'string', description: 'the wamid' }, message_status: str }, ['id']) },
    },
    ['messaging_product', 'messages'],
  ),
  ReadReceiptResult: obj({ success: { const: true } }, ['success'], { description: 'A read receipt (and typing indicator) was accepted.' }),
};

export const cloudApiSuccess: Record<string, Record<number, unknown>> = {
  'POST /{version}/{id}/messages': { 200: { anyOf: [ref('CloudSendResult'), ref('ReadReceiptResult')] } },
  'POST /{version}/{id}/media': { 200: obj({ id: str }, ['id']) },
  'GET /{version}/{id}': { 200: obj({ messaging_product: { const: 'whatsapp' }, url: str, mime_type: str, sha256: { type: ['string', 'null'] }, file_size: { type: 'string', description: 'bytes, as a string (as in Meta\'s schema)' }, id: str }, ['id', 'url', 'mime_type']) },
  'DELETE /{version}/{id}': { 200: ref('ReadReceiptResult') },
  'GET /{version}/{id}/message_templates': { 200: obj({ data: { type: 'array', items: obj({ id: str, name: str, language: str, status: str, category: str, components: { type: 'array', items: { type: 'object' } } }) }, paging: { type: 'object' } }, ['data']) },
};

/** The body of both message routes: a message, or the Cloud API's read receipt (answered `{ success: true }`). */
export const orReadReceipt = (message: Record<string, unknown>) => ({
  anyOf: [
    { title: 'Message', ...message },
    obj(
      {
        messaging_product: { const: 'whatsapp' },
        status: { const: 'read' },
        message_id: { type: 'string', description: 'the wamid (or service id) of a message the business received' },
        typing_indicator: obj({ type: { const: 'text' } }, ['type'], { description: 'also show the typing indicator (until the next message or 25 s)' }),
      },
      ['messaging_product', 'status', 'message_id'],
      { title: 'Read receipt' },
    ),
  ],
});

export const cloudApiExamples = {
  catalog: { summary: 'Catalog template button (Cloud API)', value: { messaging_product: 'whatsapp', to: '16505551234', type: 'template', template: { name: 'intro_catalog_offer', language: { code: 'en_US' }, components: [{ type: 'body', parameters: [{ type: 'text', text: '100' }, { type: 'text', text: '400' }, { type: 'text', text: '3' }] }, { type: 'button', sub_type: 'CATALOG', index: 0, parameters: [{ type: 'action', action: { thumbnail_product_retailer_id: '2lc20305pt' } }] }] } } },
  product: { summary: 'Single product (Cloud API)', value: { messaging_product: 'whatsapp', to: '16505551234', type: 'interactive', interactive: { type: 'product', body: { text: 'Mira esto' }, action: { catalog_id: '367025965434465', product_retailer_id: 'SKU-1' } } } },
  read: { summary: 'Read receipt with typing indicator', value: { messaging_product: 'whatsapp', status: 'read', message_id: 'wamid.HBgL...', typing_indicator: { type: 'text' } } },
};
