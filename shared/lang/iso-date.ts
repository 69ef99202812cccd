/**
 * ISO 8601 dates as clients write them, read strictly: `Date.parse` also takes "hello 5" (May 2001) or "12" (2001), and
 * rolls a day the calendar does not have (November 31) into the next month.
 */

/** A calendar date, or a date and time (minutes, seconds, a fraction), with a zone (`Z` or an offset) or without. */
const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

export interface IsoInstant {
  ms: number;
  /** Whether a time of day was given (a date alone is its first moment, UTC). */
  time: boolean;
  /** Whether the time came with its zone (a time without one is read as UTC). */
  zone: boolean;
}

export function parseIso(text: string): IsoInstant | undefined {
  const m = ISO.exec(text);
  if (!m) return undefined;
  const [, year, month, day, hour, minute, second, zone] = m;
  const daysInMonth = new Date(Date.UTC(Number(year), Number(month), 0)).getUTCDate();
  if (Number(month) < 1 || Number(month) > 12 || Number(day) < 1 || Number(day) > daysInMonth) return undefined;
  if (hour !== undefined && (Number(hour) > 23 || Number(minute) > 59 || Number(second ?? 0) > 59)) return undefined;
  const ms = Date.parse(hour !== undefined && !zone ? `${text}Z` : text);
  return Number.isFinite(ms) ? { ms, time: hour !== undefined, zone: zone !== undefined } : undefined;
}
