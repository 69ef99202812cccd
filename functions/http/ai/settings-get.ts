/** GET /agent/v1/settings: the business's AI agent settings. */
import { endpoint } from '#shared/http/endpoint.ts';
import { agentSettings } from '#shared/ai/agent-settings.ts';

export const { handler, spec } = endpoint(
  { route: 'GET /agent/v1/settings', summary: 'The AI agent settings of the business', responses: { 200: '{ settings }' } },
  async ({ auth }) => ({ status: 200, body: { settings: await agentSettings(auth.businessId) } }),
);
