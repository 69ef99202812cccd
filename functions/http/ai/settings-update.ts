/** PATCH /agent/v1/settings: change some of the AI agent settings; only sent fields change. */
import { endpoint } from '#shared/http/endpoint.ts';
import { settingsPatchBody } from '#shared/ai/schemas.ts';
import { updateAgentSettings } from '#shared/ai/agent-settings.ts';

export const { handler, spec } = endpoint(
  {
    route: 'PATCH /agent/v1/settings',
    summary: 'Update the AI agent settings (system prompt, model, on/off, handoff pause, debounce)',
    body: settingsPatchBody,
    responses: { 200: '{ settings }', 400: 'validation_error' },
  },
  async ({ auth, body }) => ({ status: 200, body: { settings: await updateAgentSettings(auth.businessId, body) } }),
);
