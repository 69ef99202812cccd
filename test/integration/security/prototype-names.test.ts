/**
 * Names of Object.prototype members sent as keys and as field names: every map the service keys by a
 * client's names (validation details, v3 filter keys, legacy rule fields and operators, custom fields,
 * statuses) answers them as the unknown names they are — a 400 naming them, never a 500, never a
 * function's source in a message, never a value lost on the way to the table, and no prototype touched.
 */
import type { TestTenant } from '../../support/api.ts';

// Many requests from one key: room under the rate limiter (set before config is first read).
process.env.LIMIT_REQUESTS_PER_MINUTE = '1000000';
const { invoke, newTenant } = await import('../../support/api.ts');

/** Every own member of Object.prototype (`__proto__`, `constructor`, `toString`, `hasOwnProperty`...) and `prototype`. */
const PROTO_NAMES = [...Object.getOwnPropertyNames(Object.prototype), 'prototype'];

let tenant: TestTenant;
beforeAll(async () => {
  tenant = await newTenant();
});
afterEach(() => {
  // Nothing a request did may reach Object.prototype.
  expect(Object.keys(Object.prototype)).toEqual([]);
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
});

const call = (route: string, rawBody?: string, query?: Record<string, string>) => invoke(route, { apiKey: tenant.apiKey, rawBody, query });
const NATIVE = /native code|\[object |function /;

describe.each(PROTO_NAMES)('the name %s', (name) => {
  it('as a key of PATCH /agent/v1/settings is a 400 that names it, and changes nothing', async () => {
    // Act
    const res = await call('PATCH /agent/v1/settings', `{${JSON.stringify(name)}:{"polluted":true}}`);
    // Assess
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation_error');
    expect(Object.keys(res.body.details)).toEqual([name]);
    expect(JSON.stringify(res.body)).not.toMatch(NATIVE);
    expect((await call('GET /agent/v1/settings')).body).not.toHaveProperty('polluted');
  });

  it('as a legacy rule field, operator or custom field of POST /segments/preview is a 400 that names it', async () => {
    const legacy = (condition: Record<string, unknown>) => JSON.stringify({ rules: { operator: 'AND', conditions: [condition] } });
    // Act
    const asField = await call('POST /segments/preview', legacy({ field: name, operator: 'equals', value: 'x' }));
    const asOperator = await call('POST /segments/preview', legacy({ field: 'name', operator: name, value: 'x' }));
    const asCustom = await call('POST /segments/preview', legacy({ field: `custom_fields.${name}`, operator: 'equals', value: 'x' }));
    // Assess
    expect(asField.status).toBe(400);
    expect(asField.body.error).toContain(`unknown field ${JSON.stringify(name)}`);
    expect(asOperator.status).toBe(400);
    expect(asOperator.body.error).toContain(`unknown operator ${JSON.stringify(name)} for field name`);
    for (const res of [asField, asOperator]) expect(JSON.stringify(res.body)).not.toMatch(NATIVE);
    // A custom field may carry any name the table can keep; the three it cannot are refused by name.
    if (['__proto__', 'constructor', 'prototype'].includes(name)) {
      expect(asCustom.status).toBe(400);
      expect(asCustom.body.error).toContain('custom field names may not be __proto__, constructor, prototype');
    } else {
      expect(asCustom.status).toBe(200);
      expect(asCustom.body.data.count).toBe(0);
    }
  });

  it('as a v3 filter key (segment rules and contact search) is reported by its own name', async () => {
    // Act
    const preview = await call('POST /segments/preview', `{"rules":{"version":3,"filters":{${JSON.stringify(name)}:1}}}`);
    const dated = await call('POST /segments/preview', `{"rules":{"version":3,"filters":{"created_at":{${JSON.stringify(name)}:1}}}}`);
    const search = await call('GET /contacts/v1', undefined, { filters: `{${JSON.stringify(name)}:1}` });
    // Assess
    expect(preview.status).toBe(400);
    expect(preview.body.error).toContain(`rules.filters.${name}: unknown filter key`);
    expect(dated.status).toBe(400);
    expect(dated.body.error).toContain(`rules.filters.created_at.${name}: unknown key`);
    expect(search.status).toBe(400);
    expect(search.body.message).toContain(`filters.${name}: unknown filter key`);
    for (const res of [preview, dated, search]) expect(JSON.stringify(res.body)).not.toMatch(NATIVE);
  });

  it('as an extra key of saved legacy rules (root, group, condition) is stored, or refused by name when the table cannot keep it', async () => {
    const withName = (o: Record<string, unknown>) => Object.defineProperty(o, name, { value: 1, enumerable: true });
    const condition = () => ({ field: 'name', operator: 'contains', value: 'Ana' });
    const bodies = {
      root: { operator: 'AND', conditions: [condition()] },
      condition: { operator: 'AND', conditions: [withName(condition())] },
      group: { version: 2, operator: 'OR', groups: [withName({ operator: 'AND', conditions: [condition()] })] },
    };
    withName(bodies.root);
    for (const [where, rules] of Object.entries(bodies)) {
      // Act
      const res = await call('POST /segments', JSON.stringify({ name: `legacy ${where}`, type: 'dynamic', rules }));
      // Assess
      if (['__proto__', 'constructor', 'prototype'].includes(name)) {
        expect({ where, status: res.status }).toEqual({ where, status: 400 });
        expect(res.body.error).toContain(`.${name}: is not a rule key (a stored rule cannot hold __proto__, constructor, prototype); remove it`);
      } else {
        expect({ where, status: res.status }).toEqual({ where, status: 201 });
      }
    }
  });

  it('as a custom field of a contact and of a saved segment is kept as given, or refused by name — never lost or a 500', async () => {
    // Act
    const phone = `+52155${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`;
    const contact = await call('POST /contacts/v1', JSON.stringify({ phone_number: phone, custom_fields: { [name]: 'kept' } }));
    const segment = await call('POST /segments', JSON.stringify({ name: `by ${name}`, type: 'dynamic', rules: { version: 3, filters: { custom_fields: { [name]: 'kept' } } } }));
    // Assess
    if (['__proto__', 'constructor', 'prototype'].includes(name)) {
      expect(contact.status).toBe(400);
      expect(contact.body.details.custom_fields).toEqual(['custom field names may not be __proto__, constructor, prototype']);
      expect(segment.status).toBe(400);
      expect(segment.body.error).toContain(`rules.filters.custom_fields.${name}: custom field names may not be`);
    } else {
      expect(contact.status).toBe(201);
      const stored = await invoke('GET /contacts/v1/{id}', { apiKey: tenant.apiKey, params: { id: contact.body.contact.id } });
      expect(stored.body.contact.custom_fields).toEqual({ [name]: 'kept' });
      expect(segment.status).toBe(201);
      expect(segment.body.data.contactCount).toBe(1);
    }
  });
});

describe('names read back from stored and upstream data', () => {
  it('a broadcast placeholder {{custom_fields.<member name>}} finds no value in a contact without that field', async () => {
    // Prepare
    const { renderText, MissingParameter } = await import('#shared/broadcasts/personalize.ts');
    const contact = { custom_fields: { city: 'Puebla' } } as never;
    // Act + Assess: no function source rendered into a customer's message
    for (const name of PROTO_NAMES) expect(() => renderText(`Hola {{custom_fields.${name}}}`, contact)).toThrow(MissingParameter);
    expect(renderText('{{custom_fields.city}}', contact)).toBe('Puebla');
  });

  it('a signed status webhook whose status is a member name is ignored', async () => {
    // Prepare
    const { applyStatus } = await import('#shared/messages/status.ts');
    // Act + Assess
    for (const name of PROTO_NAMES) await expect(applyStatus(tenant.businessId, { id: 'wamid.none', status: name })).resolves.toBe('ignored');
  });
});
