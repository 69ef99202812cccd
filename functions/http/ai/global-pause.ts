/** POST /agent/v1/pause (and /agent/pause): pause the AI in every conversation for 1-1440 minutes. */
import { endpoint } from '#shared/http/endpoint.ts';
import { badRequest } from '#shared/http/errors.ts';
import { globalPauseBody } from '#shared/ai/schemas.ts';
import { pauseGlobalAi } from '#shared/ai/controls.ts';

export const { handler, spec } = endpoint(
  {
    route: 'POST /agent/v1/pause',
    summary: 'Pause the AI globally for 1-1440 minutes',
    body: globalPauseBody,
    // The contract names this error: `Invalid duration`, with a message that states the range.
    invalid: () => badRequest('Invalid duration', 'Duration must be a number of minutes between 1 and 1440 (1-1440 minutes)'),
    responses: { 200: '{ success, pausedUntil, message }', 400: '{ error: "Invalid duration", message }' },
  },
  async ({ auth, body }) => ({ status: 200, body: await pauseGlobalAi(auth.businessId, body.duration) }),
);
