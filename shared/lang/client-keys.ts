/**
 * Maps keyed by names a client chose (field paths in error details, filter and rule keys, custom field
 * names, statuses). A plain object answers `toString`, `constructor` or `__proto__` from Object.prototype,
 * so looking such a name up finds a function, and writing `__proto__` swaps the prototype; these two never do.
 */
import { isStorableNumber } from './json-bounds.ts';

/** A constant table to look client-chosen names up in: only its own entries answer, everything else is undefined. */
export const lookupTable = <V>(entries: Record<string, V>): Readonly<Record<string, V | undefined>> =>
  Object.freeze(Object.assign(Object.create(null) as Record<string, V>, entries));

/** An empty record to fill under client-chosen keys: no inherited members, and `__proto__` is an ordinary key. */
export const clientKeyed = <V>(): Record<string, V> => Object.create(null) as Record<string, V>;

/** The value `record` holds under `key` itself (never one inherited from Object.prototype). */
export const ownValue = <V>(record: Readonly<Record<string, V>> | undefined, key: string): V | undefined =>
  record !== undefined && Object.hasOwn(record, key) ? record[key] : undefined;

/**
 * Names that cannot be kept as keys of a stored map: valibot's records and loose objects drop them, and the
 * DynamoDB marshaller drops `__proto__` and throws on `constructor`. Refused where a client names its own keys.
 */
export const UNSTORABLE_KEYS: readonly string[] = ['__proto__', 'constructor', 'prototype'];

export const isUnstorableKey = (key: string): boolean => UNSTORABLE_KEYS.includes(key);

/** The unstorable keys `value` holds itself, when it is an object. */
export const unstorableKeysOf = (value: unknown): string[] =>
  typeof value === 'object' && value !== null ? UNSTORABLE_KEYS.filter((key) => Object.hasOwn(value, key)) : [];

/**
 * JSON from outside that is stored as it came (Meta's notifications): parsed without the unstorable keys, at any
 * depth, and with a number the table cannot hold (past 1e126 or under 1e-130 in size) as its JSON text, so that the
 * rest of it is kept rather than the whole refused by the table. Meta sends neither.
 */
export const parseStorableJson = (text: string): unknown =>
  JSON.parse(text, (key, value) => (isUnstorableKey(key) ? undefined : typeof value === 'number' && !isStorableNumber(value) ? JSON.stringify(value) : value));
