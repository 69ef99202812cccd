/** GET /contacts/v1/{id}: a live contact (a soft-deleted one is 404). */
import { endpoint } from '#shared/http/endpoint.ts';
import { idNotFound } from '#shared/http/validation.ts';
import { getContactOrFail } from '#shared/contacts/service.ts';
import { idParams } from '#shared/contacts/schemas.ts';

export const { handler, spec } = endpoint(
  { route: 'GET /contacts/v1/{id}', summary: 'Get a contact', params: idParams, invalid: idNotFound('Contact'), responses: { 200: '{ contact }', 404: 'not_found' } },
  async ({ auth, params }) => ({ status: 200, body: { contact: await getContactOrFail(auth.businessId, params.id) } }),
);
