/** PATCH /funnel/v1/stages/reorder: listed stages first in the given order, the others after them in their relative order. */
import { endpoint } from '#shared/http/endpoint.ts';
import { idNotFound } from '#shared/http/validation.ts';
import { reorderStages } from '#shared/funnel/service.ts';
import { reorderBody } from '#shared/funnel/schemas.ts';

export const { handler, spec } = endpoint(
  {
    route: 'PATCH /funnel/v1/stages/reorder',
    summary: 'Reorder the funnel stages',
    body: reorderBody,
    invalid: idNotFound('Funnel stage'),
    responses: { 200: '{ success: true, stages: [Funnel stage] }', 400: 'validation_error', 404: 'not_found with invalid_ids' },
  },
  async ({ auth, body }) => ({ status: 200, body: { success: true, stages: await reorderStages(auth.businessId, body.stage_ids) } }),
);
