/** PATCH /conversations/v1/{id}/ai: the conversation's permanent AI on/off (and mode). */
import { endpoint } from '#shared/http/endpoint.ts';
import { idNotFound } from '#shared/http/validation.ts';
import { conversationToggleBody } from '#shared/ai/schemas.ts';
import { toggleConversationAi } from '#shared/ai/controls.ts';
import { idParams } from '#shared/http/schemas.ts';

export const { handler, spec } = endpoint(
  {
    route: 'PATCH /conversations/v1/{id}/ai',
    summary: 'Turn the AI on or off in a conversation',
    params: idParams,
    body: conversationToggleBody,
    invalid: idNotFound('Conversation'),
    responses: { 200: '{ message, settings: { aiEnabled, aiMode, aiPausedUntil } }', 400: 'validation_error', 404: 'not_found' },
  },
  async ({ auth, params, body }) => ({
    status: 200,
    body: await toggleConversationAi(auth.businessId, params.id, body.aiEnabled, body.aiMode),
  }),
);
