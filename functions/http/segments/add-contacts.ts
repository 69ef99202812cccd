/** POST /segments/{id}/contacts: add contacts by id (`{ contactIds: [...] }`) to a static segment. */
import { endpoint } from '#shared/http/endpoint.ts';
import { invalidFromFieldErrors } from '#shared/segments/errors.ts';
import { addContacts } from '#shared/segments/members.ts';

export const { handler, spec } = endpoint(
  { route: 'POST /segments/{id}/contacts', invalid: invalidFromFieldErrors, summary: 'Add contacts to a static segment', responses: { 200: '{ data: { action, affected, contactIds, contactCount, countStale } }', 404: 'not found' } },
  async ({ auth, params, body }) => ({ status: 200, body: { data: await addContacts(auth.businessId, (params as any)?.id, body) } }),
);
