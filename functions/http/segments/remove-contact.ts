/** DELETE /segments/{id}/contacts/{contactId}: remove one contact from a static segment. */
import { endpoint } from '#shared/http/endpoint.ts';
import { removeContact } from '#shared/segments/members.ts';

export const { handler, spec } = endpoint(
  { route: 'DELETE /segments/{id}/contacts/{contactId}', summary: 'Remove a contact from a static segment', responses: { 200: '{ data: { action, affected, contactIds, contactCount, countStale } }', 404: 'not found' } },
  async ({ auth, params }) => ({ status: 200, body: { data: await removeContact(auth.businessId, (params as any)?.id, (params as any)?.contactId) } }),
);
