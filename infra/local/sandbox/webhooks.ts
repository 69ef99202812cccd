/**
 * Webhooks from the sandbox to the service, shaped like the Cloud API's `whatsapp_business_account`
 * notifications and signed the way Meta signs them: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>`.
 */
import { createHmac } from 'node:crypto';

export const SANDBOX_WABA_ID = 'sandbox-waba';
export const SANDBOX_DISPLAY_NUMBER = '15550001234';

export const signBody = (body: string, appSecret: string) => `sha256=${createHmac('sha256', appSecret).update(body).digest('hex')}`;

export const notification = (phoneNumberId: string, value: Record<string, unknown>) => ({
  object: 'whatsapp_business_account',
  entry: [
    {
      id: SANDBOX_WABA_ID,
      changes: [
        {
          field: 'messages',
          value: { messaging_product: 'whatsapp', metadata: { display_phone_number: SANDBOX_DISPLAY_NUMBER, phone_number_id: phoneNumberId }, ...value },
        },
      ],
    },
  ],
});

/** Posts a signed notification; resolves with the service's HTTP status. */
export async function deliver(url: string, appSecret: string, payload: unknown): Promise<number> {
  const body = JSON.stringify(payload);
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-hub-signature-256': signBody(body, appSecret) },
    body,
  });
  await res.arrayBuffer().catch(() => undefined);
  return res.status;
}
