/** GET /contacts/v1?limit=&cursor=&search=&filters=<url-encoded JSON>: live contacts, cursor-paginated. */
import { endpoint } from '#shared/http/endpoint.ts';
import { idNotFound } from '#shared/http/validation.ts';
import { listContacts } from '#shared/contacts/service.ts';
import { listContactsQuery } from '#shared/contacts/schemas.ts';

export const { handler, spec } = endpoint(
  {
    route: 'GET /contacts/v1',
    summary: 'List and search contacts',
    query: listContactsQuery,
    invalid: idNotFound('Contact'),
    responses: { 200: '{ contacts, next_cursor }', 400: 'validation_error (bad filters) | invalid_cursor' },
  },
  async ({ auth, query }) => ({ status: 200, body: await listContacts(auth.businessId, query) }),
);
