/** POST /segments/{id}/members: bulk add or remove on a static segment, by ids or by a search selection. */
import { endpoint } from '#shared/http/endpoint.ts';
import { invalidFromFieldErrors } from '#shared/segments/errors.ts';
import { changeMembers } from '#shared/segments/members.ts';

export const { handler, spec } = endpoint(
  {
    route: 'POST /segments/{id}/members',
    invalid: invalidFromFieldErrors,
    summary: 'Bulk add or remove segment members',
    responses: { 200: '{ data: { action, affected, contactIds?, contactCount, countStale } }', 400: 'invalid body, selection or segment type', 404: 'not found', 503: 'selection_timeout' },
  },
  async ({ auth, params, body }) => ({ status: 200, body: { data: await changeMembers(auth.businessId, (params as any)?.id, body) } }),
);
