/** PATCH /contacts/v1/{id}: only sent fields change; `assigned_agent_id` also assigns the open conversation. */
import { endpoint } from '#shared/http/endpoint.ts';
import { idNotFound } from '#shared/http/validation.ts';
import { updateContact } from '#shared/contacts/service.ts';
import { idParams, updateContactBody } from '#shared/contacts/schemas.ts';

export const { handler, spec } = endpoint(
  {
    route: 'PATCH /contacts/v1/{id}',
    summary: 'Update a contact',
    params: idParams,
    body: updateContactBody,
    invalid: idNotFound('Contact'),
    responses: { 200: '{ contact }', 400: 'validation_error', 404: 'not_found', 409: 'duplicate_contact' },
  },
  async ({ auth, params, body }) => ({ status: 200, body: { contact: await updateContact(auth.businessId, params.id, body) } }),
);
