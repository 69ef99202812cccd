/** POST /funnel/v1/stages: insert a stage at `position` (default: the end), shifting the later ones. */
import { endpoint } from '#shared/http/endpoint.ts';
import { idNotFound } from '#shared/http/validation.ts';
import { createStage } from '#shared/funnel/service.ts';
import { createStageBody } from '#shared/funnel/schemas.ts';

export const { handler, spec } = endpoint(
  {
    route: 'POST /funnel/v1/stages',
    summary: 'Create a funnel stage',
    body: createStageBody,
    invalid: idNotFound('Funnel stage'),
    responses: { 201: '{ stage: Funnel stage }', 400: 'validation_error | stage_limit_reached' },
  },
  async ({ auth, body }) => ({ status: 201, body: { stage: await createStage(auth.businessId, body) } }),
);
