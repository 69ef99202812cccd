/** POST /user-webhooks/{id}/deliveries/{deliveryId}/redeliver: send a delivered or failed delivery again (same id). */
import { endpoint } from '#shared/http/endpoint.ts';
import { deliveryParams } from '#shared/webhooks/schemas.ts';
import { redeliver } from '#shared/webhooks/service.ts';

export const { handler, spec } = endpoint(
  {
    route: 'POST /user-webhooks/{id}/deliveries/{deliveryId}/redeliver',
    summary: 'Redeliver one delivery',
    params: deliveryParams,
    bodyKind: 'none',
    responses: { 202: '{ data: delivery } (queued)', 404: 'not_found', 409: 'delivery_pending | webhook_disabled | event_unsubscribed' },
  },
  async ({ auth, params }) => ({ status: 202, body: { data: await redeliver(auth.businessId, params.id, params.deliveryId) } }),
);
