/** GET /user-webhooks/{id}/deliveries: deliveries newest first, each with its attempts (status code, duration, error, time). */
import { endpoint } from '#shared/http/endpoint.ts';
import { idParams, pageQuery } from '#shared/http/schemas.ts';
import { listDeliveryViews } from '#shared/webhooks/service.ts';

export const { handler, spec } = endpoint(
  {
    route: 'GET /user-webhooks/{id}/deliveries',
    summary: 'List deliveries and their attempts',
    params: idParams,
    query: pageQuery(100, 20),
    responses: { 200: '{ data: [delivery], next_cursor }', 400: 'invalid_cursor', 404: 'not_found' },
  },
  async ({ auth, params, query }) => ({ status: 200, body: await listDeliveryViews(auth.businessId, params.id, query.limit, query.cursor) }),
);

