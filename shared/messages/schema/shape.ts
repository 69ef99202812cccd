/**
 * The shape bound of a send request: no object of more than MAX_MEMBERS members, no array of more than
 * MAX_ITEMS items, no nesting deeper than MAX_DEPTH. The Cloud API's own objects stay far inside it (its
 * widest have about ten members, its longest lists are a template's parameters and a product list's 30
 * products, its deepest path is six levels); the free-form parts of its objects (forwarded as sent) would
 * otherwise carry thousands of invented members upstream within the size bound.
 */
export const MAX_MEMBERS = 50;
export const MAX_ITEMS = 250;
export const MAX_DEPTH = 12;

export interface ShapeBreach { at: string; problem: string }

/** Where a value first leaves the bound, and how (undefined when it stays inside). */
export function outsideShapeBound(value: unknown, path = '', depth = 0): ShapeBreach | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const at = path || '_body';
  const named = path || 'the body';
  if (depth >= MAX_DEPTH) return { at, problem: `${named} is nested deeper than ${MAX_DEPTH} levels` };
  if (Array.isArray(value)) {
    if (value.length > MAX_ITEMS) return { at, problem: `${named} has ${value.length} items (at most ${MAX_ITEMS})` };
    for (let i = 0; i < value.length; i++) {
      const found = outsideShapeBound(value[i], `${path}[${i}]`, depth + 1);
      if (found) return found;
    }
    return undefined;
  }
  const entries = Object.entries(value);
  if (entries.length > MAX_MEMBERS) return { at, problem: `${named} has ${entries.length} members (at most ${MAX_MEMBERS})` };
  for (const [key, member] of entries) {
    const found = outsideShapeBound(member, path ? `${path}.${key}` : key, depth + 1);
    if (found) return found;
  }
  return undefined;
}
