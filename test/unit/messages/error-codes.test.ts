import { toDeliveryError } from '#shared/upstream/error-codes.ts';
import { UpstreamError } from '#shared/upstream/client.ts';
import { isValidSignature, signatureOf } from '#shared/upstream/signature.ts';

const upstream = (code: number | undefined, opts: Partial<{ status: number; transient: boolean; message: string }> = {}) =>
  new UpstreamError(opts.message ?? 'upstream says no', opts.status ?? 400, code, 'details', opts.transient ?? false);
/** The stored message a failure belongs to. */
const failed = { messageId: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b' };

describe('upstream delivery codes', () => {
  it.each([
    [131047, 'message_delivery_failed'],
    [131042, 'message_delivery_failed'],
    [130472, 'invalid_recipient'],
    [131026, 'user_blocked'],
    [132000, 'template_not_found'],
    // Meta's other codes for a template it cannot send as named: not there (or not in that language), paused, disabled.
    [132001, 'template_not_found'],
    [132015, 'template_not_found'],
    [132016, 'template_not_found'],
    [131048, 'spam_rate_limit'],
    [131052, 'media_download_failed'],
    [131051, 'unsupported_media_type'],
    [131053, 'file_too_large'],
  ])('maps %i to %s with code, action_required and instructions', (code, error) => {
    const out = toDeliveryError(upstream(code), { templateName: 'x', language: 'es_MX', ...failed });
    expect(out).toMatchObject({ status: 400, error, code: String(code), action_required: expect.any(String), instructions: expect.any(String), message: expect.any(String) });
    if (String(code).startsWith('132')) expect(out.details).toMatchObject({ template_name: 'x', language: 'es_MX' });
    else expect(out.details).toBeUndefined();
  });

  it('gives the 24-hour window remedy for 131047', () => {
    expect(toDeliveryError(upstream(131047), failed).instructions).toMatch(/template.*wait for the user.*retry later/i);
  });

  it('keeps the other 132 codes (parameters, format) as the upstream said them', () => {
    expect(toDeliveryError(upstream(132012, { message: '(#132012) Parameter format does not match format in the created template' }), failed)).toMatchObject({ error: 'upstream_error', code: '132012' });
  });

  it("answers Meta's 132000 as the contract's table does (template_not_found), whatever its message says", () => {
    // Meta's own title for 132000 is about the parameter count; the contract's row for the code is template_not_found.
    const mismatch = new UpstreamError('(#132000) Number of parameters does not match the expected number of params', 400, 132000, 'body: number of localizable_params (1) does not match the expected number of params (2)', false);
    expect(toDeliveryError(mismatch, { templateName: 'order_update', language: 'es_MX', ...failed })).toMatchObject({ status: 400, error: 'template_not_found', code: '132000' });
  });

  it('keeps an unknown code and its upstream message', () => {
    expect(toDeliveryError(upstream(131999, { message: '(#131999) Something new' }), failed)).toMatchObject({ code: '131999', message: '(#131999) Something new' });
  });

  it('answers exhausted transient faults as 429 (throttled) or 502', () => {
    expect(toDeliveryError(upstream(130429, { status: 429, transient: true }), failed)).toMatchObject({ status: 429, code: '130429', retry_after: 30 });
    expect(toDeliveryError(upstream(undefined, { status: 0, transient: true }), failed)).toMatchObject({ status: 502, error: 'upstream_unavailable', retry_after: 5 });
  });
});

describe('upstream webhook signature', () => {
  it('accepts the exact HMAC of the raw body and nothing else', () => {
    const body = '{"object":"whatsapp_business_account"}';
    const sig = signatureOf(body, 's3cret');
    expect(isValidSignature(body, sig, 's3cret')).toBe(true);
    expect(isValidSignature(body + ' ', sig, 's3cret')).toBe(false);
    expect(isValidSignature(body, sig, 'other')).toBe(false);
    expect(isValidSignature(body, sig.slice(0, -1), 's3cret')).toBe(false);
    expect(isValidSignature(body, undefined, 's3cret')).toBe(false);
    expect(isValidSignature(body, `sha256=${sig.slice(7).toUpperCase()}`, 's3cret')).toBe(true);
  });
});
