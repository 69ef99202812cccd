/** POST /funnel/v1/contacts/{id}/move: put a contact in a stage, or in none with `stage_id: null`. */
import { endpoint } from '#shared/http/endpoint.ts';
import { idNotFound } from '#shared/http/validation.ts';
import { moveContact } from '#shared/funnel/move.ts';
import { funnelIdParams, moveBody } from '#shared/funnel/schemas.ts';

export const { handler, spec } = endpoint(
  {
    route: 'POST /funnel/v1/contacts/{id}/move',
    summary: 'Move a contact to a funnel stage',
    params: funnelIdParams,
    body: moveBody,
    invalid: idNotFound('Contact'),
    responses: { 200: '{ contact_id, previous_stage, new_stage, moved_at }', 400: 'validation_error', 404: 'not_found (contact or stage)' },
  },
  async ({ auth, params, body }) => ({ status: 200, body: await moveContact(auth.businessId, params.id, body.stage_id) }),
);
