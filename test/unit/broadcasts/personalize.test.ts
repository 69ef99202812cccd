import { MissingParameter, personalize, renderText, unknownPlaceholders } from '#shared/broadcasts/personalize.ts';
import { secondShare } from '#shared/broadcasts/budget.ts';
import type { Contact } from '#shared/contacts/model.ts';

const ana: Contact = {
  id: '6f1c1a52-3a43-4d5e-9d0b-3f3f4b8c2a11', phone_number: '+5215512345678', name: ' Ana María López ', email: 'ana@example.com',
  tags: [], custom_fields: { city: 'Monterrey', visits: 3, empty: '', 'fecha-nacimiento': '1990-05-01', 'mi campo': 'sí', año: 2024 }, assigned_agent_id: null, funnel_stage_id: null, origin: 'api',
  opted_out: false, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z', last_contact_at: null, deleted_at: null,
};

describe('personalize', () => {
  it.each([
    ['{{contact.name}}', 'Ana María López'],
    ['Hola {{ contact.first_name }}!', 'Hola Ana!'],
    ['{{name}} / {{phone_number}} / {{email}}', 'Ana María López / +5215512345678 / ana@example.com'],
    ['{{custom_fields.city}}', 'Monterrey'],
    ['{{contact.custom_fields.visits}} visitas', '3 visitas'],
    ['{{contact.id}}', ana.id],
    ['{{custom_fields.country|México}}', 'México'],
    ['{{custom_fields.empty|vacío}}', 'vacío'],
    // A custom field is named as the contact has it: dashes, spaces, accents.
    ['{{custom_fields.fecha-nacimiento}} {{ contact.custom_fields.mi campo }} {{custom_fields.año|x}}', '1990-05-01 sí 2024'],
    // Placeholders that name no contact field are the template's own business.
    ['{{1}} and {{id}} and {{foo.bar}}', '{{1}} and {{id}} and {{foo.bar}}'],
  ])('renders %s as %s', (text, expected) => {
    expect(renderText(text, ana)).toBe(expected);
  });

  it('refuses an empty value without a fallback', () => {
    expect(() => renderText('{{custom_fields.country}}', ana)).toThrow(MissingParameter);
    expect(() => renderText('{{contact.name}}', { ...ana, name: null })).toThrow(MissingParameter);
  });

  it('renders every string of a full template request, leaving other values alone', () => {
    // Prepare
    const request = {
      type: 'template',
      template: {
        name: 'order_update',
        language: { code: 'es_MX' },
        components: [{ type: 'body', parameters: [{ type: 'text', text: '{{contact.first_name}}' }, { type: 'currency', currency: { fallback_value: '$10', code: 'MXN', amount_1000: 10000 } }] }],
      },
    };

    // Act
    const out = personalize(request, ana);

    // Assess
    expect(out.template.components[0].parameters[0]).toEqual({ type: 'text', text: 'Ana' });
    expect(out.template.components[0].parameters[1]).toEqual(request.template.components[0].parameters[1]);
    expect(request.template.components[0].parameters[0].text).toBe('{{contact.first_name}}');
  });
});

describe('unknownPlaceholders', () => {
  it('names ours that name no field or do not close, and leaves the template\'s own alone', () => {
    expect(unknownPlaceholders({ a: ['{{contact.foo}} {{contact.name}}', { b: 'Hola {{custom_fields.city|x}} {{contact.name' }], c: '{{1}} {{foo.bar}} {{id}}' }))
      .toEqual(['{{contact.foo}}', '{{contact.name']);
    expect(unknownPlaceholders(['{{ contact.first_name }}', '{{contact.custom_fields.visits}}', '{{contact.id}}', '{{custom_fields.my-field|x}}', 7, null])).toEqual([]);
  });
});

describe('secondShare', () => {
  it.each([60, 540, 1000, 3000, 4800])('spreads a pace of %i per minute so that no 62 consecutive seconds exceed it', (pace) => {
    const start = 1_795_000_000;
    const shares = Array.from({ length: 300 }, (_, i) => secondShare(pace, start + i));
    for (let i = 0; i + 62 <= shares.length; i++) {
      const sum = shares.slice(i, i + 62).reduce((a, b) => a + b, 0);
      expect(sum).toBeLessThanOrEqual(pace);
      expect(sum).toBeGreaterThanOrEqual(pace - 1);
    }
  });
});
