/** PATCH /funnel/v1/stages/{id}: only the sent fields (name, color) change. */
import { endpoint } from '#shared/http/endpoint.ts';
import { updateStage } from '#shared/funnel/service.ts';
import { funnelIdParams, funnelInvalid, updateStageBody } from '#shared/funnel/schemas.ts';

export const { handler, spec } = endpoint(
  {
    route: 'PATCH /funnel/v1/stages/{id}',
    summary: 'Update a funnel stage',
    params: funnelIdParams,
    body: updateStageBody,
    invalid: funnelInvalid('Funnel stage'),
    responses: { 200: '{ stage: Funnel stage }', 400: 'validation_error', 404: 'not_found' },
  },
  async ({ auth, params, body }) => ({ status: 200, body: { stage: await updateStage(auth.businessId, params.id, body) } }),
);
