/** GET /broadcasts/v1: the business's broadcasts, newest first. */
import { endpoint } from '#shared/http/endpoint.ts';
import { listBroadcastsQuery } from '#shared/broadcasts/schemas.ts';
import { listBroadcastViews } from '#shared/broadcasts/service.ts';

export const { handler, spec } = endpoint(
  { route: 'GET /broadcasts/v1', summary: 'List broadcasts', query: listBroadcastsQuery, responses: { 200: '{ data: [Broadcast], next_cursor }', 400: 'validation_error (limit, status) | invalid_cursor' } },
  async ({ auth, query }) => ({ status: 200, body: await listBroadcastViews(auth.businessId, query) }),
);
