/** PATCH /funnel/v1/stages/{id}: only the sent fields (name, color) change. */
import { endpoint } from '#shared/http/endpoint.ts';
import { idNotFound } from '#shared/http/validation.ts';
import { updateStage } from '#shared/funnel/service.ts';
import { funnelIdParams, updateStageBody } from '#shared/funnel/schemas.ts';

export const { handler, spec } = endpoint(
  {
    route: 'PATCH /funnel/v1/stages/{id}',
    summary: 'Update a funnel stage',
    params: funnelIdParams,
    body: updateStageBody,
    invalid: idNotFound('Funnel stage'),
    responses: { 200: '{ stage: Funnel stage }', 400: 'validation_error', 404: 'not_found' },
  },
  async ({ auth, params, body }) => ({ status: 200, body: { stage: await updateStage(auth.businessId, params.id, body) } }),
);
