/**
 * The message templates every sandbox WABA has approved (decisions.md, "sandbox rules"), in the shape of
 * the Cloud API's `GET /{waba-id}/message_templates`. Quick-reply buttons may carry a configured `payload`
 * (the business's buttonId): `reminder_buttons` configures one for button 0 and none for button 1, so that
 * both the configured id and the `btn_{index}_{name}` fallback can be seen.
 */
export interface SandboxTemplate {
  id: string;
  name: string;
  language: string;
  status: 'APPROVED';
  category: 'UTILITY' | 'MARKETING';
  components: Record<string, unknown>[];
}

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
];

/** Number of `{{n}}` placeholders in a component's text. */
export const placeholderCount = (text: unknown): number =>
  typeof text === 'string' ? new Set(text.match(/\{\{\s*\d+\s*\}\}/g) ?? []).size : 0;
