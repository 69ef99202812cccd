/** GET /conversations/v1/{id}/messages: the messages of a conversation, newest first, cursor-paginated. */
import { missingRecord } from '#shared/auth/ownership.ts';
import { endpoint } from '#shared/http/endpoint.ts';
import { idParams, pageQuery } from '#shared/http/schemas.ts';
import { decodeCursor, encodeCursor } from '#shared/http/cursor.ts';
import { notFound, validationError } from '#shared/http/errors.ts';
import { keys } from '#shared/store/keys.ts';
import { getConversation } from '#shared/conversations/repository.ts';
import { listMessages, messageView } from '#shared/messages/repository.ts';

export const { handler, spec } = endpoint(
  {
    route: 'GET /conversations/v1/{id}/messages',
    summary: 'List the messages of a conversation (newest first)',
    params: idParams,
    query: pageQuery(100, 50),
    invalid: (details, where) => (where === 'params' ? notFound('Conversation not found') : validationError(details, `Invalid query: ${Object.keys(details).join(', ')}`)),
    responses: { 200: '{ messages, next_cursor }', 400: 'validation_error (limit) | invalid_cursor', 404: 'not_found' },
  },
  async ({ auth, params, query }) => {
    if (!(await getConversation(auth.businessId, params.id))) throw await missingRecord('conversation', params.id, auth.businessId, notFound('Conversation not found'));
    const { pk, skPrefix } = keys.messagePrefix(auth.businessId);
    const start = decodeCursor(query.cursor, {
      pk, sk: { prefix: skPrefix }, gsi1pk: keys.messagesOfConversationPk(auth.businessId, params.id), gsi1sk: { prefix: '' },
    });
    const page = await listMessages(auth.businessId, params.id, query.limit, start);
    return { status: 200, body: { messages: page.messages.map(messageView), next_cursor: encodeCursor(page.lastKey) } };
  },
);
