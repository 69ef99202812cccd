/**
 * Phone numbers are stored in E.164 (`+` and 8-15 digits), so that one number is one key however a client
 * wrote it. The digits are kept as written, never rewritten: WhatsApp ids such as Mexico's `521…` are not
 * "possible" numbers to libphonenumber but are what the platform sends and expects. The only check beyond the
 * shape is that the number starts with a real country calling code (calling-codes.ts): a table of 215 codes
 * instead of libphonenumber's 120 KB of metadata, which was most of the send function's cold start.
 */
import { COUNTRY_CALLING_CODES } from './calling-codes.ts';

/**
 * "+44 (0)20 7946 0000": the trunk 0 in parentheses is dialled only within the country, never after the calling code.
 * Every reading of a number a client wrote (a contact's, a send's `to`, a phone filter or search) leaves it out.
 */
export const withoutTrunkZero = (written: string): string => written.replace(/\(\s*0\s*\)/g, '');

/** E.164: a number has at most 15 digits. */
export const MAX_E164_DIGITS = 15;

/** Country calling codes are one to three digits, and none is a prefix of another. */
const hasCallingCode = (digits: string): boolean => [1, 2, 3].some((n) => COUNTRY_CALLING_CODES.has(digits.slice(0, n)));

export function normalizePhone(input: unknown): string | null {
  if (typeof input !== 'string') return null;
  // "(+52) 55 1234 5678", as some write it: the parenthesis may open before the + or 00 too.
  const trimmed = withoutTrunkZero(input.trim().replace(/^\((?=\+|00)/, ''));
  if (!/^(\+|00)?[\d\s().-]{8,32}$/.test(trimmed)) return null;
  let digits = trimmed.replace(/\D/g, '');
  if (trimmed.startsWith('00')) digits = digits.slice(2);
  if (digits.length < 8 || digits.length > MAX_E164_DIGITS || digits.startsWith('0')) return null;
  return hasCallingCode(digits) ? `+${digits}` : null;
}

/** What a number given to the contacts API must be, as the contract states it. */
export const PHONE_FORMAT = 'must be a phone number in international format with a leading +, e.g. +5215512345678';

/**
 * A number as a client gives it to the contacts API: the contract's international format, with its leading `+` (spaces,
 * dashes and parentheses between the digits are taken, "(+52) 55…" too); null for anything else, a national number or
 * one written with `00` included. Numbers that come from WhatsApp itself (`wa_id`, digits only) go through normalizePhone.
 */
export const internationalPhone = (input: unknown): string | null =>
  typeof input === 'string' && /^\(?\+/.test(input.trim()) ? normalizePhone(input) : null;
