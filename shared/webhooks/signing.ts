/**
 * What a delivery carries: the compact JSON `{ event, data }` and the headers that let a receiver check
 * it came from us, unchanged, recently. Two schemes over the same bytes:
 * - `X-Webhook-Signature`: hex HMAC-SHA256 of the body, keyed with the subscription secret (as a string);
 * - Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`), signed by the
 *   `standardwebhooks` library so that receivers can use any Standard Webhooks verifier and reject replays.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** A new signing secret: `whsec_` + base64 of 32 random bytes (the Standard Webhooks secret format). */
export const newSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

/** Objects with their members in name order, at every depth (arrays keep theirs). */
const canonical = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== 'object') return value;
  const obj = value as Record<string, unknown>;
  return Object.fromEntries(Object.keys(obj).sort().map((k) => [k, canonical(obj[k])]));
};

/**
 * The exact bytes sent: compact JSON `{ event, data }`, the same string a receiver gets from
 * JSON.stringify(JSON.parse(body)). `data`'s members go in name order, so that every attempt of a delivery
 * carries the same bytes (a retry reads the data back from the table, which keeps no member order).
 */
export const serializePayload = (event: string, data: unknown): string => JSON.stringify({ event, data: canonical(data) });

export const hexSignature = (body: string, secret: string): string => createHmac('sha256', secret).update(body, 'utf8').digest('hex');

export function signedHeaders(input: { deliveryId: string; event: string; body: string; secret: string; at?: Date }): Record<string, string> {
  const at = input.at ?? new Date();
  // Standard Webhooks timestamps are whole seconds; the ISO header is the time of sending to the millisecond.
  const seconds = new Date(Math.floor(at.getTime() / 1000) * 1000);
  return {
    'content-type': 'application/json',
    'user-agent': 'wa-crm-webhooks/1.0',
    'x-webhook-signature': hexSignature(input.body, input.secret),
    'x-webhook-event': input.event,
    'x-webhook-timestamp': at.toISOString(),
    'x-webhook-id': input.deliveryId,
    'webhook-id': input.deliveryId,
    'webhook-timestamp': String(seconds.getTime() / 1000),
    'webhook-signature': new Webhook(input.secret).sign(input.deliveryId, seconds, input.body),
  };
}
