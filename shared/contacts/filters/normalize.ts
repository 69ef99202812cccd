/**
 * Text normalisation shared by the projection writer and every filter: one definition, so that what is
 * stored and what is compared can never disagree. Matching is case- and accent-insensitive.
 */
import { parseIso } from '#shared/lang/iso-date.ts';
import { withoutTrunkZero } from '#shared/contacts/phone.ts';

export const fold = (s: string): string =>
  s.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase().trim();

/** The digits of a number as written (a trunk "(0)" after the calling code is no digit of it: phone.ts). */
export const digits = (s: string): string => withoutTrunkZero(s).replace(/\D/g, '');

/** UUIDs travel in the projection as 22 base64url characters instead of 36. */
export const packUuid = (id: string): string => {
  const hex = id.replace(/-/g, '');
  return /^[0-9a-f]{32}$/i.test(hex) ? Buffer.from(hex, 'hex').toString('base64url') : `~${id}`;
};

export const unpackUuid = (packed: string): string => {
  if (packed.startsWith('~')) return packed.slice(1);
  const hex = Buffer.from(packed, 'base64url').toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};

/** ISO 8601 → epoch seconds (the projection's date unit), null when absent or not an ISO 8601 date or date-time. */
export const epochSeconds = (iso: string | null | undefined): number | null => {
  const parsed = iso ? parseIso(iso) : undefined;
  return parsed ? Math.floor(parsed.ms / 1000) : null;
};
