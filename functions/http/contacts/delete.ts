/** DELETE /contacts/v1/{id}: soft delete; the contact leaves every list, count and segment, and its number is free again. */
import { endpoint } from '#shared/http/endpoint.ts';
import { idNotFound } from '#shared/http/validation.ts';
import { deleteContact } from '#shared/contacts/service.ts';
import { idParams } from '#shared/contacts/schemas.ts';

export const { handler, spec } = endpoint(
  { route: 'DELETE /contacts/v1/{id}', summary: 'Delete a contact (soft)', params: idParams, invalid: idNotFound('Contact'), responses: { 200: '{ success: true, id }', 404: 'not_found' } },
  async ({ auth, params }) => {
    await deleteContact(auth.businessId, params.id);
    return { status: 200, body: { success: true, id: params.id } };
  },
);
