/** verifyWebhookSignature: hex HMAC-SHA256 of the exact bytes, constant-time compare, never throws on junk. */
import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { verifyWebhookSignature } from '#shared/client/verify.ts';

const sign = (body: string | Uint8Array, secret: string) => createHmac('sha256', secret).update(body).digest('hex');

describe('verifyWebhookSignature', () => {
  it('accepts the signature of the exact body and secret (string or bytes, any hex case)', () => {
    // Prepare
    const body = '{"event":"message.sent","data":{"message_id":"m1","content":"olá"}}';
    const sig = sign(body, 'whsec_1');
    // Act / Assess
    expect(verifyWebhookSignature(body, sig, 'whsec_1')).toBe(true);
    expect(verifyWebhookSignature(Buffer.from(body), sig.toUpperCase(), 'whsec_1')).toBe(true);
  });

  it('rejects another body, another secret, a truncated or malformed signature', () => {
    // Prepare
    const body = '{"event":"a","data":{}}';
    const sig = sign(body, 's');
    // Act / Assess
    expect(verifyWebhookSignature(body + ' ', sig, 's')).toBe(false);
    expect(verifyWebhookSignature(body, sig, 't')).toBe(false);
    expect(verifyWebhookSignature(body, sig.slice(0, 62), 's')).toBe(false);
    expect(verifyWebhookSignature(body, `${sig.slice(0, 63)}g`, 's')).toBe(false);
    expect(verifyWebhookSignature(body, undefined, 's')).toBe(false);
    expect(verifyWebhookSignature(body, '', 's')).toBe(false);
  });

  it('holds for arbitrary bodies and secrets: own signature verifies, any other 64-hex string does not', () => {
    fc.assert(
      fc.property(fc.string(), fc.string({ minLength: 1 }), fc.stringMatching(/^[0-9a-f]{64}$/), (body, secret, other) => {
        const sig = sign(body, secret);
        expect(verifyWebhookSignature(body, sig, secret)).toBe(true);
        if (other !== sig) expect(verifyWebhookSignature(body, other, secret)).toBe(false);
      }),
    );
  });
});
