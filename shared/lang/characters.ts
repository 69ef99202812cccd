/**
 * Characters as the contract's and the Cloud API's limits count them: Unicode code points, so an emoji is one
 * character, not two UTF-16 units (which `String.length` and valibot's `maxLength` count).
 */
import * as v from 'valibot';

export function characters(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xdc00 || c > 0xdfff) n++;
  }
  return n;
}

/** A string of at most `max` characters (code points). */
export const maxCharacters = (max: number, message: string) => v.check((s: string) => characters(s) <= max, message);
