/** DELETE /user-webhooks/{id}: stop delivering; pending deliveries are given up. */
import { endpoint } from '#shared/http/endpoint.ts';
import { idParams } from '#shared/http/schemas.ts';
import { removeSubscription } from '#shared/webhooks/service.ts';

export const { handler, spec } = endpoint(
  { route: 'DELETE /user-webhooks/{id}', summary: 'Delete a webhook subscription', params: idParams, responses: { 200: '{ success: true, id }', 404: 'not_found' } },
  async ({ auth, params }) => ({ status: 200, body: await removeSubscription(auth.businessId, params.id) }),
);
