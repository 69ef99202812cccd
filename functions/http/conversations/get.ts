/** GET /conversations/v1/{id}: one conversation, with its 24-hour window and AI settings. */
import { endpoint } from '#shared/http/endpoint.ts';
import { idNotFound } from '#shared/http/validation.ts';
import { idParams } from '#shared/http/schemas.ts';
import { notFound } from '#shared/http/errors.ts';
import { missingRecord } from '#shared/auth/ownership.ts';
import { conversationView, getConversation } from '#shared/conversations/repository.ts';

export const { handler, spec } = endpoint(
  {
    route: 'GET /conversations/v1/{id}',
    summary: 'Get a conversation',
    params: idParams,
    invalid: idNotFound('Conversation'),
    responses: { 200: '{ conversation }', 404: 'not_found' },
  },
  async ({ auth, params }) => {
    const conversation = await getConversation(auth.businessId, params.id);
    if (!conversation) throw await missingRecord('conversation', params.id, auth.businessId, notFound('Conversation not found'));
    return { status: 200, body: { conversation: conversationView(conversation) } };
  },
);
