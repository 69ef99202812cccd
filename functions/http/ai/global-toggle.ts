/** POST /agent/v1/toggle (and /agent/toggle): the global AI on/off. */
import { endpoint } from '#shared/http/endpoint.ts';
import { globalToggleBody } from '#shared/ai/schemas.ts';
import { setGlobalAi } from '#shared/ai/controls.ts';

export const { handler, spec } = endpoint(
  {
    route: 'POST /agent/v1/toggle',
    summary: 'Turn the AI on or off for every conversation',
    body: globalToggleBody,
    responses: { 200: '{ success, enabled }', 400: 'validation_error' },
  },
  async ({ auth, body }) => ({ status: 200, body: await setGlobalAi(auth.businessId, body.enabled) }),
);
