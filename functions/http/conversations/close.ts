/** POST /conversations/v1/{id}/close: close a conversation (emits conversation.closed); the next message opens a new one. */
import { endpoint } from '#shared/http/endpoint.ts';
import { idNotFound } from '#shared/http/validation.ts';
import { idParams } from '#shared/http/schemas.ts';
import { closeConversation } from '#shared/conversations/close.ts';
import { conversationView } from '#shared/conversations/repository.ts';

export const { handler, spec } = endpoint(
  {
    route: 'POST /conversations/v1/{id}/close',
    summary: 'Close a conversation',
    params: idParams,
    invalid: idNotFound('Conversation'),
    responses: { 200: '{ conversation } with status "closed" and closedAt', 403: 'forbidden', 404: 'not_found' },
  },
  async ({ auth, params }) => ({ status: 200, body: { conversation: conversationView(await closeConversation(auth.businessId, params.id)) } }),
);
