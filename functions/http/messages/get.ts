/** GET /messages/v1/{id}: one message of the business. */
import { endpoint } from '#shared/http/endpoint.ts';
import { idNotFound } from '#shared/http/validation.ts';
import { idParams } from '#shared/http/schemas.ts';
import { notFound } from '#shared/http/errors.ts';
import { missingRecord } from '#shared/auth/ownership.ts';
import { getMessage, messageView } from '#shared/messages/repository.ts';

export const { handler, spec } = endpoint(
  {
    route: 'GET /messages/v1/{id}',
    summary: 'Get a message',
    params: idParams,
    invalid: idNotFound('Message'),
    responses: { 200: '{ message }', 404: 'not_found' },
  },
  async ({ auth, params }) => {
    const message = await getMessage(auth.businessId, params.id);
    if (!message) throw await missingRecord('message', params.id, auth.businessId, notFound('Message not found'));
    return { status: 200, body: { message: messageView(message) } };
  },
);
