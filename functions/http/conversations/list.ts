/** GET /conversations/v1: the business's conversations, most recent activity first. */
import { endpoint } from '#shared/http/endpoint.ts';
import { pageQuery } from '#shared/http/schemas.ts';
import { decodeCursor, encodeCursor } from '#shared/http/cursor.ts';
import { keys } from '#shared/store/keys.ts';
import { conversationView, listConversations } from '#shared/conversations/repository.ts';

export const { handler, spec } = endpoint(
  {
    route: 'GET /conversations/v1',
    summary: 'List conversations (cursor-paginated, newest activity first)',
    query: pageQuery(100, 20),
    responses: { 200: '{ conversations, next_cursor }', 400: 'validation_error (limit) | invalid_cursor' },
  },
  async ({ auth, query }) => {
    const { pk, skPrefix } = keys.conversationPrefix(auth.businessId);
    const start = decodeCursor(query.cursor, {
      pk, sk: { prefix: skPrefix }, gsi1pk: keys.conversationsByRecencyPk(auth.businessId), gsi1sk: { prefix: '' },
    });
    const page = await listConversations(auth.businessId, query.limit, start);
    return { status: 200, body: { conversations: page.conversations.map((c) => conversationView(c)), next_cursor: encodeCursor(page.lastKey) } };
  },
);
