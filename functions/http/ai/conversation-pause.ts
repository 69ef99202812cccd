/** POST /conversations/v1/{id}/ai/pause: a timed pause of the AI in one conversation (default 5 minutes). */
import { endpoint } from '#shared/http/endpoint.ts';
import { idNotFound } from '#shared/http/validation.ts';
import { conversationPauseBody } from '#shared/ai/schemas.ts';
import { pauseConversation } from '#shared/ai/controls.ts';
import { idParams } from '#shared/http/schemas.ts';

export const { handler, spec } = endpoint(
  {
    route: 'POST /conversations/v1/{id}/ai/pause',
    summary: 'Pause the AI in a conversation for 1-1440 minutes (default 5)',
    params: idParams,
    body: conversationPauseBody,
    invalid: idNotFound('Conversation'),
    responses: { 200: '{ success, pausedUntil, message }', 400: 'validation_error', 404: 'not_found' },
  },
  async ({ auth, params, body }) => ({
    status: 200,
    body: await pauseConversation(auth.businessId, params.id, body.duration),
  }),
);
