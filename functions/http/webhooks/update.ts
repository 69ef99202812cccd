/** PATCH /user-webhooks/{id}: change name, url, events, or enable/disable deliveries. */
import { endpoint } from '#shared/http/endpoint.ts';
import { idParams } from '#shared/http/schemas.ts';
import { updateBody } from '#shared/webhooks/schemas.ts';
import { updateSubscriptionFields } from '#shared/webhooks/service.ts';

export const { handler, spec } = endpoint(
  {
    route: 'PATCH /user-webhooks/{id}',
    summary: 'Update a webhook subscription',
    params: idParams,
    body: updateBody,
    responses: { 200: '{ data: subscription }', 400: 'validation_error', 404: 'not_found', 409: 'duplicate_webhook (another subscription has this URL and these events)' },
  },
  async ({ auth, params, body }) => ({ status: 200, body: { data: await updateSubscriptionFields(auth.businessId, params.id, body) } }),
);
