import * as v from 'valibot';
import { toFieldErrors } from '#shared/http/validation.ts';

const issuesOf = (schema: v.GenericSchema, input: unknown) => {
  const result = v.safeParse(schema, input);
  if (result.success) throw new Error('expected issues');
  return result.issues;
};

describe('toFieldErrors', () => {
  it("words an absent required member as required, not in valibot's words", () => {
    const schema = v.object({ aiEnabled: v.boolean('aiEnabled must be a boolean'), nested: v.object({ enabled: v.boolean() }) });
    expect(toFieldErrors(issuesOf(schema, { nested: {} }))).toEqual({ aiEnabled: ['aiEnabled is required'], 'nested.enabled': ['nested.enabled is required'] });
  });

  it("keeps the schema's own message for a member of the wrong type, and for a body that is no object", () => {
    expect(toFieldErrors(issuesOf(v.object({ aiEnabled: v.boolean('aiEnabled must be a boolean') }), { aiEnabled: 'yes' }))).toEqual({ aiEnabled: ['aiEnabled must be a boolean'] });
    expect(toFieldErrors(issuesOf(v.looseObject({ text: v.string() }, 'the body must be an object'), undefined))).toEqual({ _body: ['the body must be an object'] });
  });
});
