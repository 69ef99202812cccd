/**
 * Property: wherever the legacy front end claims an exact v3 equivalent, both front ends select exactly
 * the same contacts, for random contacts and random rules (values drawn from small pools so that rules
 * actually match and miss).
 */
import fc from 'fast-check';
import { validateLegacyRules, type LegacyRules } from '#shared/contacts/filters/legacy.ts';
import { legacyToCondition, legacyToFilters } from '#shared/contacts/filters/legacy-compile.ts';
import { compileCondition } from '#shared/contacts/filters/predicate.ts';
import { compileFilters } from '#shared/contacts/filters/compile.ts';
import { projectContact } from '#shared/contacts/filters/projection.ts';
import { validateFilters } from '#shared/contacts/filters/filters.ts';
import type { Contact } from '#shared/contacts/model.ts';

const NOW = Date.parse('2026-03-01T12:00:00.000Z');
const STAGES = ['11111111-2222-4333-8444-555555555555', '21111111-2222-4333-8444-555555555555'];
const AGENTS = ['31111111-2222-4333-8444-555555555555', '41111111-2222-4333-8444-555555555555'];
const TAGS = ['vip', 'Lead', 'newsletter', 'cliente'];
const NAMES = ['Ana', 'María José', 'Jose', 'ana maria', 'Bo'];
const ORIGINS = ['api', 'inbound', 'bulk'];
const CITIES = ['Guadalajara', 'CDMX', 'monterrey'];

const isoDaysAgo = (d: number) => new Date(NOW - d * 86_400_000).toISOString();

const contactArb: fc.Arbitrary<Contact> = fc.record({
  id: fc.uuid(),
  phone_number: fc.constantFrom('+5215512345678', '+14155550100', '+5215598765432'),
  name: fc.option(fc.constantFrom(...NAMES), { nil: null }),
  email: fc.option(fc.constantFrom('ana@example.com', 'jose@corp.mx', 'BO@EXAMPLE.COM'), { nil: null }),
  tags: fc.subarray(TAGS),
  custom_fields: fc.record({ city: fc.constantFrom(...CITIES), score: fc.constantFrom(1, 2, 3) }, { requiredKeys: [] }),
  assigned_agent_id: fc.option(fc.constantFrom(...AGENTS), { nil: null }),
  funnel_stage_id: fc.option(fc.constantFrom(...STAGES), { nil: null }),
  origin: fc.constantFrom(...ORIGINS),
  opted_out: fc.boolean(),
  created_at: fc.integer({ min: 0, max: 120 }).map(isoDaysAgo),
  updated_at: fc.constant(isoDaysAgo(0)),
  last_contact_at: fc.option(fc.integer({ min: 0, max: 120 }).map(isoDaysAgo), { nil: null }),
  deleted_at: fc.constant(null),
});

/** Conditions of every field and operator, mappable or not. */
const conditionArb = fc.oneof(
  fc.record({ field: fc.constantFrom('name', 'email'), operator: fc.constantFrom('equals', 'contains', 'not_equals', 'is_empty'), value: fc.constantFrom('ana', 'María José', 'example', 'jose@corp.mx') }),
  fc.record({ field: fc.constant('phone'), operator: fc.constantFrom('equals', 'contains', 'starts_with'), value: fc.constantFrom('55', '+52 1 55', '4155550100') }),
  fc.record({ field: fc.constant('tags'), operator: fc.constantFrom('contains', 'not_contains'), value: fc.constantFrom(...TAGS) }),
  fc.record({ field: fc.constant('tags'), operator: fc.constantFrom('contains_any', 'contains_all', 'not_in'), value: fc.subarray(TAGS, { minLength: 1 }) }),
  fc.record({ field: fc.constantFrom('funnel_stage_id', 'assigned_agent_id'), operator: fc.constantFrom('equals', 'not_equals'), value: fc.constantFrom(...STAGES, ...AGENTS) }),
  fc.record({ field: fc.constantFrom('funnel_stage_id', 'assigned_agent_id'), operator: fc.constant('in'), value: fc.subarray([...STAGES, ...AGENTS], { minLength: 1 }) }),
  fc.record({ field: fc.constant('origin'), operator: fc.constantFrom('equals', 'not_equals'), value: fc.constantFrom(...ORIGINS) }),
  fc.record({ field: fc.constant('origin'), operator: fc.constant('in'), value: fc.subarray(ORIGINS, { minLength: 1 }) }),
  fc.record({ field: fc.constantFrom('created_at', 'last_contact_at'), operator: fc.constantFrom('within_days', 'older_than_days'), value: fc.integer({ min: 1, max: 100 }) }),
  fc.record({ field: fc.constantFrom('created_at', 'last_contact_at'), operator: fc.constantFrom('after', 'before'), value: fc.integer({ min: 0, max: 120 }).map(isoDaysAgo) }),
  fc.record({ field: fc.constantFrom('custom_fields.city', 'custom_fields.score'), operator: fc.constantFrom('equals', 'contains', 'is_empty', 'is_not_empty'), value: fc.constantFrom('guadalajara', 'cdmx', 'MONTERREY', '2') }),
  fc.record({ field: fc.constant('opted_out'), operator: fc.constant('equals'), value: fc.boolean() }),
);

const logicArb = fc.constantFrom('AND', 'OR');
const rulesArb: fc.Arbitrary<LegacyRules> = fc.oneof(
  fc.record({ operator: logicArb, conditions: fc.array(conditionArb, { minLength: 1, maxLength: 4 }) }) as fc.Arbitrary<LegacyRules>,
  fc.record({
    version: fc.constant(2 as const),
    operator: logicArb,
    groups: fc.array(fc.record({ operator: logicArb, conditions: fc.array(conditionArb, { minLength: 1, maxLength: 3 }) }), { minLength: 1, maxLength: 3 }),
  }) as fc.Arbitrary<LegacyRules>,
);

describe('legacy rules and their v3 equivalents', () => {
  it('select the same contacts wherever an equivalent is claimed', () => {
    let claimed = 0;
    fc.assert(
      fc.property(rulesArb, fc.array(contactArb, { minLength: 1, maxLength: 30 }), (rules, contacts) => {
        // Prepare
        if (!validateLegacyRules(rules as any).ok) return; // a value the generator cannot avoid (none expected)
        const filters = legacyToFilters(rules);
        if (!filters) return;
        claimed++;

        // Act
        const legacy = compileCondition(legacyToCondition(rules, NOW));
        const v3 = compileFilters(filters, { nowMs: NOW });

        // Assess
        expect(validateFilters(filters, { allowSegmentId: false }).ok).toBe(true);
        for (const c of contacts) expect(v3(projectContact(c))).toBe(legacy(projectContact(c)));
      }),
      { numRuns: 1500 },
    );
    // The property must have been exercised, not skipped.
    expect(claimed).toBeGreaterThan(200);
  });

  it('claims equivalents for plain conjunctions and none for disjunctions or negations', () => {
    const and = { operator: 'AND', conditions: [{ field: 'tags', operator: 'contains', value: 'vip' }, { field: 'created_at', operator: 'within_days', value: 30 }] } as LegacyRules;
    expect(legacyToFilters(and)).toEqual({ tags: { all: ['vip'] }, created_at: { within_days: 30 } });
    const v2 = { version: 2, operator: 'AND', groups: [{ operator: 'AND', conditions: [{ field: 'funnel_stage_id', operator: 'equals', value: STAGES[0] }] }, { operator: 'OR', conditions: [{ field: 'last_contact_at', operator: 'older_than_days', value: 7 }] }] } as LegacyRules;
    expect(legacyToFilters(v2)).toEqual({ funnel_stage_id: STAGES[0], last_contact_at: { older_than_days: 7 } });
    expect(legacyToFilters({ operator: 'OR', conditions: [{ field: 'tags', operator: 'contains', value: 'a' }, { field: 'tags', operator: 'contains', value: 'b' }] })).toBeNull();
    expect(legacyToFilters({ operator: 'AND', conditions: [{ field: 'name', operator: 'not_equals', value: 'x' }] })).toBeNull();
  });
});
