/** POST /broadcasts/v1/{id}/cancel: stops what has not gone out (a scheduled broadcast never starts). */
import { endpoint } from '#shared/http/endpoint.ts';
import { idNotFound } from '#shared/http/validation.ts';
import { idParams } from '#shared/http/schemas.ts';
import { cancelBroadcast } from '#shared/broadcasts/service.ts';

export const { handler, spec } = endpoint(
  {
    route: 'POST /broadcasts/v1/{id}/cancel',
    summary: 'Cancel a scheduled or running broadcast',
    params: idParams,
    bodyKind: 'none',
    invalid: idNotFound('Broadcast'),
    responses: { 200: '{ data: Broadcast }', 400: 'invalid_state', 404: 'not_found' },
  },
  async ({ auth, params }) => ({ status: 200, body: { data: await cancelBroadcast(auth.businessId, params.id) } }),
);
