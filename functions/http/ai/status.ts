/** GET /agent/v1/status: the global toggle and the end of a running global pause (null when none runs). */
import { endpoint } from '#shared/http/endpoint.ts';
import { globalAiStatus } from '#shared/ai/controls.ts';

export const { handler, spec } = endpoint(
  { route: 'GET /agent/v1/status', summary: 'Global AI status', responses: { 200: '{ enabled, pausedUntil }' } },
  async ({ auth }) => ({ status: 200, body: await globalAiStatus(auth.businessId) }),
);
