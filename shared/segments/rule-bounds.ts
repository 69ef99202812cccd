/**
 * Bounds on segment rules, checked where rules come in (create, update, preview) and not where stored rules
 * are read. A dynamic segment's rules are evaluated against every contact of the business on each list,
 * detail, members call and broadcast, so an unbounded rule is unbounded work repeated on every use (4,000
 * conditions were stored and evaluated; 9,000 failed to store, as a 500).
 */
import { ruleError } from './rules.ts';
import { isObject } from '#shared/lang/is-object.ts';

export const RULE_LIMITS = {
  /**
   * Leaf conditions: legacy conditions over all groups; in v3, each filter key, and each custom-field entry
   * as one more. An audience a person writes by hand needs a handful; 50 leaves room for generated rules.
   */
  conditions: 50,
  /** Legacy v2 groups: an OR of up to 10 AND-groups covers the audiences v2 was made for. */
  groups: 10,
  /** Custom-field entries of one v3 filter (each is one more lookup per contact). */
  customFields: 20,
  /** The rules as JSON: 8 KB holds 50 conditions with generous values, and keeps the segment item small. */
  bytes: 8 * 1024,
} as const;

const lengthOf = (x: unknown) => (Array.isArray(x) ? x.length : 0);

/** v3: one per filter key, the custom-field filter counting one per entry. */
function v3Shape(filters: unknown): { conditions: number; customFields: number } {
  if (!isObject(filters)) return { conditions: 0, customFields: 0 };
  let conditions = 0;
  let customFields = 0;
  for (const [key, value] of Object.entries(filters)) {
    if ((key === 'custom_fields' || key === 'customFields') && isObject(value)) {
      customFields += Object.keys(value).length;
      conditions += Object.keys(value).length;
    } else conditions++;
  }
  return { conditions, customFields };
}

/** Legacy: v2 counts the conditions of every group; v1 has one list. */
function legacyShape(rules: Record<string, unknown>): { conditions: number; groups: number } {
  if (!Array.isArray(rules.groups) || rules.version !== 2) return { conditions: lengthOf(rules.conditions), groups: 0 };
  return { conditions: rules.groups.reduce((n: number, g) => n + (isObject(g) ? lengthOf(g.conditions) : 0), 0), groups: rules.groups.length };
}

/** The rule error for rules past a bound, or undefined when they are within every bound (their form is checked elsewhere). */
export function ruleBoundsError(rules: unknown): string | undefined {
  const bytes = Buffer.byteLength(JSON.stringify(rules) ?? '');
  if (bytes > RULE_LIMITS.bytes) return ruleError(`Segment rules are too large: ${bytes} bytes as JSON; at most ${RULE_LIMITS.bytes} are allowed`);
  if (!isObject(rules)) return undefined;
  const shape = rules.version === 3 ? { ...v3Shape(rules.filters), groups: 0 } : { ...legacyShape(rules), customFields: 0 };
  if (shape.groups > RULE_LIMITS.groups) return ruleError(`Segment rules have ${shape.groups} groups; at most ${RULE_LIMITS.groups} are allowed`);
  if (shape.conditions > RULE_LIMITS.conditions) return ruleError(`Segment rules have ${shape.conditions} conditions; at most ${RULE_LIMITS.conditions} are allowed`);
  if (shape.customFields > RULE_LIMITS.customFields) {
    return ruleError(`Segment rules filter on ${shape.customFields} custom fields; at most ${RULE_LIMITS.customFields} are allowed`);
  }
  return undefined;
}
