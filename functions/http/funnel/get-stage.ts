/** GET /funnel/v1/stages/{id}. */
import { endpoint } from '#shared/http/endpoint.ts';
import { idNotFound } from '#shared/http/validation.ts';
import { getStageOrFail } from '#shared/funnel/service.ts';
import { funnelIdParams } from '#shared/funnel/schemas.ts';

export const { handler, spec } = endpoint(
  {
    route: 'GET /funnel/v1/stages/{id}',
    summary: 'Get a funnel stage',
    params: funnelIdParams,
    invalid: idNotFound('Funnel stage'),
    responses: { 200: '{ stage: Funnel stage }', 404: 'not_found' },
  },
  async ({ auth, params }) => ({ status: 200, body: { stage: await getStageOrFail(auth.businessId, params.id) } }),
);
