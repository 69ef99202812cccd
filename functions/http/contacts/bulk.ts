/**
 * POST /contacts/v1/bulk: one of six operations on up to 100 contacts, with a result per contact.
 * 200 when every contact succeeded, 207 when any failed (also when all did: the request itself was fine and
 * the answer is in `results`). Request-level problems are 400 (validation_error) or 404 (unknown stage).
 */
import { endpoint } from '#shared/http/endpoint.ts';
import { idNotFound } from '#shared/http/validation.ts';
import { runBulk } from '#shared/contacts/bulk.ts';
import { bulkBody } from '#shared/contacts/bulk-schemas.ts';

export const { handler, spec } = endpoint(
  {
    route: 'POST /contacts/v1/bulk',
    summary: 'Bulk contact operations',
    body: bulkBody,
    invalid: idNotFound('Contact'),
    responses: {
      200: '{ operation, success_count, error_count, results } (all succeeded)',
      207: 'the same, when any contact failed',
      400: 'validation_error (more than 100 contacts, missing fields)',
      404: 'not_found (set_funnel_stage with an unknown stage)',
    },
  },
  async ({ auth, body }) => {
    const result = await runBulk(auth.businessId, body);
    return { status: result.error_count === 0 ? 200 : 207, body: result };
  },
);
