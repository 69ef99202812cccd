/**
 * Verifying a webhook delivery: recompute the hex HMAC-SHA256 of the exact body bytes with the
 * subscription secret and compare in constant time (timingSafeEqual), before trusting the body.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export function verifyWebhookSignature(rawBody: string | Uint8Array, signatureHex: string | undefined | null, secret: string): boolean {
  if (typeof signatureHex !== 'string' || !/^[0-9a-fA-F]{64}$/.test(signatureHex.trim())) return false;
  const expected = createHmac('sha256', secret).update(rawBody).digest();
  const given = Buffer.from(signatureHex.trim(), 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
