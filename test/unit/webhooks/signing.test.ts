import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { newSecret, serializePayload, signedHeaders } from '#shared/webhooks/signing.ts';
import { targetProblem } from '#shared/webhooks/target.ts';

describe('delivery signing', () => {
  it('signs the exact body with both schemes', () => {
    // Prepare
    const secret = newSecret();
    const body = serializePayload('contact.created', { contact_id: 'c', name: 'Zoë' });
    const at = new Date('2026-03-04T05:06:07.890Z');

    // Act
    const h = signedHeaders({ deliveryId: 'd-1', event: 'contact.created', body, secret, at });

    // Assess
    expect(body).toBe('{"event":"contact.created","data":{"contact_id":"c","name":"Zoë"}}');
    expect(h['x-webhook-signature']).toBe(createHmac('sha256', secret).update(body).digest('hex'));
    expect(h['x-webhook-timestamp']).toBe('2026-03-04T05:06:07.890Z'); // the time of sending; Standard Webhooks' is whole seconds
    expect(h['webhook-timestamp']).toBe(String(Date.parse('2026-03-04T05:06:07Z') / 1000));
    expect(h['x-webhook-id']).toBe('d-1');
    expect(h['webhook-id']).toBe('d-1');
    expect(h['webhook-signature']).toBe(new Webhook(secret).sign('d-1', new Date('2026-03-04T05:06:07Z'), body));
    expect(new Webhook(newSecret()).sign('d-1', new Date('2026-03-04T05:06:07Z'), body)).not.toBe(h['webhook-signature']);
  });

  it('makes Standard Webhooks secrets', () => {
    const a = newSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(32);
    expect(newSecret()).not.toBe(a);
  });
});

describe('webhook target check', () => {
  it.each([
    ['https://example.com/h', true, undefined],
    ['http://example.com/h', true, undefined],
    ['http://127.0.0.1:3000/h', true, undefined],
    ['http://169.254.169.254/', true, 'metadata'],
    ['http://example.com/h', false, 'https'],
    ['https://192.168.1.1/h', false, 'private'],
    ['https://hooks.internal/h', false, 'local host name'],
    ['https://example.com/h', false, undefined],
    ['javascript:alert(1)', true, 'http or https'],
  ])('%s (private allowed: %s)', (url, allowPrivate, problem) => {
    const got = targetProblem(url, allowPrivate);
    if (problem === undefined) expect(got).toBeUndefined();
    else expect(got).toContain(problem);
  });
});
