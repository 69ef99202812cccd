/** Whether a parsed JSON value is an object with members (not null, not an array). */
export const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);
