/** POST /contacts/v1: a contact with a unique E.164 phone number (409 duplicate_contact names the existing one). */
import { endpoint } from '#shared/http/endpoint.ts';
import { idNotFound } from '#shared/http/validation.ts';
import { createContact } from '#shared/contacts/service.ts';
import { createContactBody } from '#shared/contacts/schemas.ts';

export const { handler, spec } = endpoint(
  {
    route: 'POST /contacts/v1',
    summary: 'Create a contact',
    body: createContactBody,
    invalid: idNotFound('Contact'),
    responses: { 201: '{ contact }', 400: 'validation_error', 409: 'duplicate_contact with existing_contact_id' },
  },
  async ({ auth, body }) => ({ status: 201, body: { contact: await createContact(auth.businessId, body) } }),
);
