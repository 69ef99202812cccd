/**
 * Upstream webhook authentication: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>` keyed with
 * the app secret. The raw bytes matter: re-serialised JSON would not match.
 *
 * Every secret the upstream presents (signature, verify token) is compared by `sameSecret`: SHA-256 digests of both
 * sides, compared in constant time. Digests always have the same length, so no input (a multibyte string, one of
 * another length) throws or tells its caller how long the expected value is.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

/** Whether `given` equals `expected`, in time independent of both; an empty expected value never matches. */
export const sameSecret = (given: string, expected: string): boolean =>
  timingSafeEqual(digest(given), digest(expected)) && expected !== '';

export const signatureOf = (rawBody: Buffer | string, appSecret: string): string =>
  `sha256=${createHmac('sha256', appSecret).update(rawBody).digest('hex')}`;

export function isValidSignature(rawBody: Buffer | string, header: string | undefined, appSecret: string): boolean {
  if (!header || !appSecret) return false;
  // Hex digits in either case are the same digest (the scheme's name, `sha256=`, too).
  return sameSecret(header.trim().toLowerCase(), signatureOf(rawBody, appSecret));
}
