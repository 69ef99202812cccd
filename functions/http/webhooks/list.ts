/** GET /user-webhooks: the business's subscriptions (without secrets). */
import { endpoint } from '#shared/http/endpoint.ts';
import { listSubscriptionViews } from '#shared/webhooks/service.ts';

export const { handler, spec } = endpoint(
  { route: 'GET /user-webhooks', summary: 'List webhook subscriptions', responses: { 200: '{ data: [subscription] }' } },
  async ({ auth }) => ({ status: 200, body: { data: await listSubscriptionViews(auth.businessId) } }),
);
