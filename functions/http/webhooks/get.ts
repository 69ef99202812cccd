/** GET /user-webhooks/{id}: one subscription, with its enabled state and why it was disabled. */
import { endpoint } from '#shared/http/endpoint.ts';
import { idParams } from '#shared/http/schemas.ts';
import { getSubscriptionView } from '#shared/webhooks/service.ts';

export const { handler, spec } = endpoint(
  { route: 'GET /user-webhooks/{id}', summary: 'Get a webhook subscription', params: idParams, responses: { 200: '{ data: subscription }', 404: 'not_found' } },
  async ({ auth, params }) => ({ status: 200, body: { data: await getSubscriptionView(auth.businessId, params.id) } }),
);
