/**
 * Phone numbers are stored in E.164 (`+` and 8-15 digits), so that one number is one key however a client
 * wrote it. The digits are kept as written, never rewritten: WhatsApp ids such as Mexico's `521…` are not
 * "possible" numbers to libphonenumber but are what the platform sends and expects. libphonenumber only
 * decides that the number starts with a real country calling code.
 */
import { parsePhoneNumberFromString } from 'libphonenumber-js';

export function normalizePhone(input: unknown): string | null {
  if (typeof input !== 'string') return null;
  const trimmed = input.trim();
  if (!/^(\+|00)?[\d\s().-]{8,32}$/.test(trimmed)) return null;
  let digits = trimmed.replace(/\D/g, '');
  if (trimmed.startsWith('00')) digits = digits.slice(2);
  if (digits.length < 8 || digits.length > 15 || digits.startsWith('0')) return null;
  const e164 = `+${digits}`;
  return parsePhoneNumberFromString(e164)?.countryCallingCode ? e164 : null;
}
