/** POST /user-webhooks/{id}/test: send a signed `webhook.test` delivery now and report how the receiver answered. */
import { endpoint } from '#shared/http/endpoint.ts';
import { idParams } from '#shared/http/schemas.ts';
import { sendTest } from '#shared/webhooks/service.ts';

export const { handler, spec } = endpoint(
  {
    route: 'POST /user-webhooks/{id}/test',
    summary: 'Send a test delivery',
    params: idParams,
    bodyKind: 'none',
    responses: { 200: '{ data: { deliveryId, event, success, statusCode, durationMs, error } }', 404: 'not_found' },
  },
  async ({ auth, params }) => ({ status: 200, body: { data: await sendTest(auth.businessId, params.id) } }),
);
