/** Characters as the limits count them: code points (shared/lang/characters.ts). */
import * as v from 'valibot';
import { characters, maxCharacters } from '#shared/lang/characters.ts';

describe('characters', () => {
  it('counts an emoji (a surrogate pair) once, and accents and plain letters once each', () => {
    expect(characters('😀😀')).toBe(2);
    expect('😀😀'.length).toBe(4);
    expect(characters('éa')).toBe(2);
    expect(characters('')).toBe(0);
  });

  it('takes a string at the limit in code points and refuses one past it', () => {
    const schema = v.pipe(v.string(), maxCharacters(3, 'at most 3 characters'));
    expect(v.safeParse(schema, '😀😀😀').success).toBe(true);
    expect(v.safeParse(schema, '😀😀😀😀').issues?.[0].message).toBe('at most 3 characters');
  });
});
