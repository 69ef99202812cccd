/**
 * Upstream webhook authentication: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>` keyed with
 * the app secret, compared in constant time. The raw bytes matter: re-serialised JSON would not match.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const signatureOf = (rawBody: Buffer | string, appSecret: string): string =>
  `sha256=${createHmac('sha256', appSecret).update(rawBody).digest('hex')}`;

export function isValidSignature(rawBody: Buffer | string, header: string | undefined, appSecret: string): boolean {
  if (!header || !appSecret) return false;
  const expected = Buffer.from(signatureOf(rawBody, appSecret), 'utf8');
  const given = Buffer.from(header.trim(), 'utf8');
  // timingSafeEqual needs equal lengths; a length mismatch is already a mismatch.
  return given.length === expected.length && timingSafeEqual(given, expected);
}
