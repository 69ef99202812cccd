/** DELETE /funnel/v1/stages/{id}: only an empty stage; the later stages move up one position. */
import { endpoint } from '#shared/http/endpoint.ts';
import { idNotFound } from '#shared/http/validation.ts';
import { deleteStage } from '#shared/funnel/service.ts';
import { funnelIdParams } from '#shared/funnel/schemas.ts';

export const { handler, spec } = endpoint(
  {
    route: 'DELETE /funnel/v1/stages/{id}',
    summary: 'Delete an empty funnel stage',
    params: funnelIdParams,
    invalid: idNotFound('Funnel stage'),
    responses: { 200: '{ success: true, id }', 400: 'stage_not_empty (with contact_count)', 404: 'not_found' },
  },
  async ({ auth, params }) => {
    await deleteStage(auth.businessId, params.id);
    return { status: 200, body: { success: true, id: params.id } };
  },
);
