/** POST /broadcasts/v1: a template to a segment or a contact list, now or at `send_at`. */
import { endpoint } from '#shared/http/endpoint.ts';
import { createBroadcastBody } from '#shared/broadcasts/schemas.ts';
import { createBroadcast } from '#shared/broadcasts/service.ts';

export const { handler, spec } = endpoint(
  {
    route: 'POST /broadcasts/v1',
    summary: 'Create a broadcast (sent now, or scheduled with send_at)',
    body: createBroadcastBody,
    responses: { 201: '{ data: Broadcast }', 400: 'validation_error, or broadcast_limit_reached (100 unfinished broadcasts with a send_at, or 100 started at once)' },
  },
  async ({ auth, body }) => ({ status: 201, body: { data: await createBroadcast(auth.businessId, body) } }),
);
