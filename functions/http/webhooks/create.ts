/** POST /user-webhooks: subscribe a URL to events; the signing secret is shown here (and on regenerate) only. */
import { endpoint } from '#shared/http/endpoint.ts';
import { createBody } from '#shared/webhooks/schemas.ts';
import { createSubscription } from '#shared/webhooks/service.ts';

export const { handler, spec } = endpoint(
  {
    route: 'POST /user-webhooks',
    summary: 'Create a webhook subscription',
    body: createBody,
    responses: {
      201: '{ data: { id, name, url, events, secret, createdAt } }',
      400: 'validation_error (unknown event names, URL not allowed); limit_reached (16 subscriptions a business)',
      409: 'duplicate_webhook (a subscription with this URL and these events exists: existing_webhook_id)',
    },
  },
  async ({ auth, body }) => ({ status: 201, body: { data: await createSubscription(auth.businessId, body) } }),
);
