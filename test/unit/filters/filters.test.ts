import { validateFilters } from '#shared/contacts/filters/filters.ts';
import { compileFilters, compileSelection, matchesContact } from '#shared/contacts/filters/compile.ts';
import { decodeProjection, encodeProjection, projectContact, shardOf, SHARD_COUNT } from '#shared/contacts/filters/projection.ts';
import { validateLegacyRules } from '#shared/contacts/filters/legacy.ts';
import { parseRules, rulesCondition } from '#shared/segments/rules.ts';
import type { Contact } from '#shared/contacts/model.ts';
import { packUuid, unpackUuid } from '#shared/contacts/filters/normalize.ts';

const base = (fields: Partial<Contact> = {}): Contact => ({
  id: '6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b',
  phone_number: '+5215512345678',
  name: 'María López',
  email: 'Maria@Example.com',
  tags: ['VIP', 'newsletter'],
  custom_fields: { city: 'Guadalajara', score: 42, active: true },
  assigned_agent_id: '0b1c2d3e-4f50-4a6b-8c7d-8e9f0a1b2c3d',
  funnel_stage_id: '11111111-2222-4333-8444-555555555555',
  origin: 'api',
  opted_out: false,
  created_at: '2026-01-10T10:00:00.000Z',
  updated_at: '2026-01-10T10:00:00.000Z',
  last_contact_at: null,
  deleted_at: null,
  ...fields,
});

describe('contact projection', () => {
  it('round-trips every filterable attribute in a compact string', () => {
    // Prepare
    const c = base({ last_contact_at: '2026-02-01T00:00:00.000Z', opted_out: true });

    // Act
    const proj = encodeProjection(c);
    const back = decodeProjection(proj, c.id);

    // Assess
    expect({
      id: back.id, phone: back.phone, name: back.name, email: back.email, tags: back.tags, stage: back.stage, origin: back.origin,
      created: back.created, lastContact: back.lastContact, agent: back.agent, optedOut: back.optedOut, custom: back.custom,
    }).toEqual({
      id: c.id, phone: '5215512345678', name: 'maria lopez', email: 'maria@example.com', tags: ['vip', 'newsletter'],
      stage: packUuid(c.funnel_stage_id!), origin: 'api', created: Date.parse(c.created_at) / 1000, lastContact: Date.parse(c.last_contact_at!) / 1000,
      agent: packUuid(c.assigned_agent_id!), optedOut: true, custom: c.custom_fields,
    });
    expect(unpackUuid(back.stage!)).toBe(c.funnel_stage_id);
    expect(proj.length).toBeLessThan(JSON.stringify(c).length * 0.6);
  });

  it('spreads ids over every shard', () => {
    const seen = new Set(Array.from({ length: 2000 }, () => shardOf(crypto.randomUUID())));
    expect(seen.size).toBe(SHARD_COUNT);
  });
});

describe('validateFilters (strict)', () => {
  it.each([
    [{}, /empty/],
    [{ colour: 'red' }, /unknown filter key/],
    [{ tags: { any: [] } }, /empty list/],
    [{ tags: {} }, /empty object/],
    [{ tags: { any: ['a'], some: ['b'] } }, /tags\.some: unknown key/],
    [{ phone: 'abc' }, /no digits/],
    [{ phone: { contains: '--' } }, /no digits/],
    [{ name: '' }, /empty/],
    [{ funnel_stage_id: 'nope' }, /UUID/],
    [{ created_at: { within_days: 0 } }, /whole number/],
    [{ last_contact_at: { older_than_days: 3, since: 2 } }, /unknown key/],
    [{ custom_fields: {} }, /empty object/],
    [{ custom_fields: { city: { equals: 'x', like: 'y' } } }, /unknown key/],
    [{ segment_id: '11111111-2222-4333-8444-555555555555' }, /not allowed/],
    [[], /must be an object/],
    // Dates are ISO 8601, read strictly (Date.parse takes "hello 5" for May 2001 and rolls February 30 into March).
    ...['hello 5', '12', 'June 2030', '2024-02-30', '2024-13-01', '2024-01-01T25:00Z', '2024-01-01 10:00'].map((d): [unknown, RegExp] => [{ created_at: { before: d } }, /ISO 8601/]),
  ])('rejects %j', (input, message) => {
    const res = validateFilters(input, { allowSegmentId: false });
    expect(res.ok).toBe(false);
    expect(res.ok ? '' : res.errors.join('\n')).toMatch(message);
  });

  it('accepts every documented shape, and segment_id where allowed', () => {
    const filters = {
      phone: { contains: '55 12' }, name: 'mar', email: { equals: 'maria@example.com' },
      tags: { any: ['vip'], all: ['newsletter'], none: ['blocked'] }, funnel_stage_id: ['11111111-2222-4333-8444-555555555555'],
      origin: 'api', created_at: { within_days: 30, after: '2026-01-01' }, last_contact_at: { older_than_days: 7 },
      custom_fields: { city: 'guadalajara', score: { equals: 42 }, plan: { exists: false } }, assigned_agent_id: '0b1c2d3e-4f50-4a6b-8c7d-8e9f0a1b2c3d',
      opted_out: false, segment_id: '11111111-2222-4333-8444-555555555555',
    };
    expect(validateFilters(filters, { allowSegmentId: true }).ok).toBe(true);
    for (const d of ['2024-02-29', '2024-01-01T10:00', '2024-01-01T10:00:00.123Z', '2024-01-01T10:00+05:30', '2024-01-01T10:00:00-0600']) {
      expect(validateFilters({ last_contact_at: { after: d } }, { allowSegmentId: false }).ok).toBe(true);
    }
  });
});

describe('compiled filters', () => {
  const now = Date.parse('2026-01-20T00:00:00.000Z');
  const c = base();
  const match = (filters: any) => matchesContact(c, compileFilters(filters, { nowMs: now }));

  it.each([
    [{ name: 'MARIA' }, true],
    [{ name: { equals: 'maría lópez' } }, true],
    [{ name: { equals: 'maría' } }, false],
    [{ phone: '+52 155' }, true],
    // A trunk "(0)" after the calling code is no digit of the number, as when the number was stored.
    [{ phone: { equals: '+52 (0)1 55 1234 5678' } }, true],
    [{ email: 'example.com' }, true],
    [{ tags: { any: ['vip', 'x'] } }, true],
    [{ tags: { all: ['vip', 'x'] } }, false],
    [{ tags: { none: ['newsletter'] } }, false],
    [{ funnel_stage_id: '11111111-2222-4333-8444-555555555555' }, true],
    [{ origin: ['inbound', 'bulk'] }, false],
    [{ created_at: { within_days: 15 } }, true],
    [{ created_at: { within_days: 5 } }, false],
    [{ created_at: { older_than_days: 5 } }, true],
    [{ created_at: { before: '2026-01-10T10:00:00.000Z' } }, false],
    [{ created_at: { after: '2026-01-10T10:00:00.000Z' } }, true],
    [{ last_contact_at: { older_than_days: 1 } }, false],
    [{ custom_fields: { city: 'GUADALAJARA', score: 42, active: true } }, true],
    [{ custom_fields: { city: { contains: 'jara' }, plan: { exists: false } } }, true],
    [{ assigned_agent_id: '0b1c2d3e-4f50-4a6b-8c7d-8e9f0a1b2c3d' }, true],
    [{ opted_out: true }, false],
    [JSON.parse('{"custom_fields":{"__proto__":{"exists":true},"toString":{"exists":true}}}'), false],
  ])('%j → %s', (filters, expected) => {
    expect(match(filters)).toBe(expected);
  });

  it.each([
    ['+52 1 55', true],
    ['(521) 55', true],
    ['maria', true],
    // Digits inside words are not a phone search: "Customer 52" does not find every number with a 52 in it.
    ['Customer 52', false],
    ['maria 52', false],
  ])('search %j → %s', (search, expected) => {
    expect(matchesContact(c, compileSelection({ search }, { nowMs: now }))).toBe(expected);
  });

  it('never matches a soft-deleted contact', () => {
    expect(matchesContact(base({ deleted_at: '2026-01-11T00:00:00.000Z' }), compileFilters({ name: 'maria' }))).toBe(false);
    expect(projectContact(c).id).toBe(c.id);
  });
});

describe('segment rules', () => {
  it.each([
    [undefined, /need rules/],
    [{ version: 4, filters: { name: 'a' } }, /Unknown rules version/],
    [{ version: 3, filters: { name: 'a' }, operator: 'AND' }, /remove "operator"/],
    [{ version: 3, filters: {} }, /empty/],
    [{ version: 3 }, /missing/],
    [{ version: 3, filters: { segment_id: '11111111-2222-4333-8444-555555555555' } }, /segment_id/],
    [{ operator: 'AND', conditions: [] }, /no condition/],
    [{ operator: 'AND', conditions: [{ field: 'shoe_size', operator: 'equals', value: 4 }] }, /unknown field/],
    [{ operator: 'AND', conditions: [{ field: 'name', operator: 'sounds_like', value: 'x' }] }, /unknown operator/],
    [{ version: 2, operator: 'OR', groups: [] }, /no condition/],
    [{ version: 2, operator: 'OR', groups: [{ operator: 'AND', conditions: [{ field: 'phone', operator: 'contains', value: 'abc' }] }] }, /no digits/],
    ['tags=vip', /must be an object/],
    [{ operator: 'AND', conditions: [{ field: 'created_at', operator: 'after', value: '1' }] }, /ISO 8601/],
  ])('rejects %j with a message that says what to fix', (rules, message) => {
    const parsed = parseRules(rules);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.error).toMatch(message);
      expect(parsed.error).toMatch(/Correct the rule and retry\.$/);
    }
  });

  it('classifies v3, v1 and v2', () => {
    expect(parseRules({ version: 3, filters: { tags: { any: ['vip'] } } })).toMatchObject({ ok: true, format: 'filters' });
    expect(parseRules({ operator: 'AND', conditions: [{ field: 'tags', operator: 'contains', value: 'vip' }] })).toMatchObject({ ok: true, format: 'legacy' });
    expect(parseRules({ version: 2, operator: 'OR', groups: [{ operator: 'AND', conditions: [{ field: 'created_at', operator: 'within_days', value: 7 }] }] })).toMatchObject({ ok: true, format: 'legacy' });
    expect(validateLegacyRules({ operator: 'XOR', conditions: [{ field: 'name', operator: 'is_empty' }] }).ok).toBe(false);
    expect(parseRules({ version: 1, operator: 'OR', conditions: [{ field: 'origin', operator: 'in', value: ['api'] }] })).toMatchObject({ ok: true, format: 'legacy' });
    const stray = parseRules({ operator: 'AND', conditions: [{ field: 'tags', operator: 'contains', value: 'vip' }], groups: 'junk' });
    expect(stray.ok).toBe(true);
    if (stray.ok) expect(rulesCondition(stray, Date.now())).toEqual({ k: 'all', of: [{ k: 'all', of: [{ k: 'tag', tag: 'vip' }] }] });
  });
});
