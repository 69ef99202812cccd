/** GET /conversations/v1: the business's conversations, most recent activity first. */
import { endpoint } from '#shared/http/endpoint.ts';
import { encodeCursor, pageQuery } from '#shared/http/schemas.ts';
import { keys } from '#shared/store/keys.ts';
import { conversationView, listConversations } from '#shared/conversations/repository.ts';
import { ownCursor } from '#shared/conversations/paging.ts';

export const { handler, spec } = endpoint(
  {
    route: 'GET /conversations/v1',
    summary: 'List conversations (cursor-paginated, newest activity first)',
    query: pageQuery(100, 20),
    responses: { 200: '{ conversations, next_cursor }', 400: 'validation_error (limit, cursor)' },
  },
  async ({ auth, query }) => {
    const start = ownCursor(query.cursor, { pk: keys.business(auth.businessId).pk, gsi1pk: keys.conversationsByRecencyPk(auth.businessId) });
    const page = await listConversations(auth.businessId, query.limit, start);
    return { status: 200, body: { conversations: page.conversations.map((c) => conversationView(c)), next_cursor: encodeCursor(page.lastKey) } };
  },
);
