/**
 * The message templates every sandbox WABA has approved (decisions.md, "sandbox rules"), in the shape of
 * the Cloud API's `GET /{waba-id}/message_templates`. Quick-reply buttons may carry a configured `payload`
 * (the business's buttonId): `reminder_buttons` configures one for button 0 and none for button 1, so that
 * both the configured id and the `btn_{index}_{name}` fallback can be seen. The `sample_*` and `intro_catalog_offer`
 * templates have the shapes of the template examples in Meta's OpenAPI description (test/fixtures/cloud-api).
 */
export interface SandboxTemplate {
  id: string;
  name: string;
  language: string;
  status: 'APPROVED';
  category: 'UTILITY' | 'MARKETING';
  components: Record<string, unknown>[];
}

const THREE_VALUES = { type: 'BODY', text: 'Your order {{1}} of {{2}} ships on {{3}}.', example: { body_text: [['A-1', '$100.99', 'February 25, 1977']] } };
const en = (id: string, name: string, category: SandboxTemplate['category'], components: Record<string, unknown>[]): SandboxTemplate =>
  ({ id, name, language: 'en_US', status: 'APPROVED', category, components });

export const SANDBOX_TEMPLATES: SandboxTemplate[] = [
  {
    id: '900000000000001',
    name: 'hello_world',
    language: 'en_US',
    status: 'APPROVED',
    category: 'UTILITY',
    components: [
      { type: 'HEADER', format: 'TEXT', text: 'Hello World' },
      { type: 'BODY', text: 'Welcome and congratulations!! This message demonstrates your ability to send a message notification from the sandbox.' },
      { type: 'FOOTER', text: 'WhatsApp Business Platform sample message' },
    ],
  },
  {
    id: '900000000000002',
    name: 'order_update',
    language: 'es_MX',
    status: 'APPROVED',
    category: 'UTILITY',
    components: [
      { type: 'BODY', text: 'Hola {{1}}, tu pedido {{2}} está en camino.', example: { body_text: [['Ana', 'A-1001']] } },
    ],
  },
  {
    id: '900000000000003',
    name: 'promo_header',
    language: 'es_MX',
    status: 'APPROVED',
    category: 'MARKETING',
    components: [
      { type: 'HEADER', format: 'IMAGE', example: { header_handle: ['https://example.com/promo.jpg'] } },
      { type: 'BODY', text: '¡{{1}}, tenemos una promoción para ti!', example: { body_text: [['Ana']] } },
    ],
  },
  {
    id: '900000000000004',
    name: 'reminder_buttons',
    language: 'es_MX',
    status: 'APPROVED',
    category: 'UTILITY',
    components: [
      { type: 'BODY', text: 'Hola {{1}}, ¿confirmas tu cita de mañana?', example: { body_text: [['Ana']] } },
      {
        type: 'BUTTONS',
        buttons: [
          { type: 'QUICK_REPLY', text: 'Confirmar', payload: 'confirm_appointment' },
          { type: 'QUICK_REPLY', text: 'Cancelar' },
        ],
      },
    ],
  },
  en('900000000000005', 'sample_shipping_confirmation', 'UTILITY', [THREE_VALUES]),
  en('900000000000006', 'sample_purchase_feedback', 'MARKETING', [{ type: 'HEADER', format: 'IMAGE', example: { header_handle: ['https://example.com/p.jpg'] } }, THREE_VALUES]),
  en('900000000000007', 'sample_purchase_buttons', 'MARKETING', [
    { type: 'HEADER', format: 'IMAGE', example: { header_handle: ['https://example.com/p.jpg'] } },
    THREE_VALUES,
    { type: 'BUTTONS', buttons: [{ type: 'QUICK_REPLY', text: 'Yes' }, { type: 'QUICK_REPLY', text: 'No' }] },
  ]),
  en('900000000000008', 'sample_flow_signup', 'MARKETING', [
    { type: 'BODY', text: 'Sign up in a minute.' },
    { type: 'BUTTONS', buttons: [{ type: 'FLOW', text: 'Sign up', flow_id: '1234567890123456' }] },
  ]),
  en('900000000000009', 'intro_catalog_offer', 'MARKETING', [
    { type: 'BODY', text: 'Now shop for your favourite products right here on WhatsApp! Get Rs {{1}} off on all orders above {{2}}Rs! Valid for your first {{3}} orders.', example: { body_text: [['100', '400', '3']] } },
    { type: 'BUTTONS', buttons: [{ type: 'CATALOG', text: 'View catalog' }] },
  ]),
  en('900000000000010', 'sample_issue_resolution', 'UTILITY', [
    { type: 'BODY', text: 'Hi {{1}}, were we able to solve the issue that you were facing?', example: { body_text: [['Mr. Jones']] } },
    { type: 'BUTTONS', buttons: [{ type: 'QUICK_REPLY', text: 'Yes' }, { type: 'QUICK_REPLY', text: 'No' }] },
  ]),
];

/** Number of `{{n}}` placeholders in a component's text. */
export const placeholderCount = (text: unknown): number =>
  typeof text === 'string' ? new Set(text.match(/\{\{\s*\d+\s*\}\}/g) ?? []).size : 0;
