/** GET /broadcasts/v1/{id}: status and counts (updated as delivery statuses arrive). */
import { endpoint } from '#shared/http/endpoint.ts';
import { idNotFound } from '#shared/http/validation.ts';
import { idParams } from '#shared/http/schemas.ts';
import { getBroadcastView } from '#shared/broadcasts/service.ts';

export const { handler, spec } = endpoint(
  {
    route: 'GET /broadcasts/v1/{id}',
    summary: 'Get a broadcast',
    params: idParams,
    // An id that is not a UUID names no broadcast.
    invalid: idNotFound('Broadcast'),
    responses: { 200: '{ data: Broadcast }', 404: 'not_found' },
  },
  async ({ auth, params }) => ({ status: 200, body: { data: await getBroadcastView(auth.businessId, params.id) } }),
);
