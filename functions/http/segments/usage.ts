/** GET /segments/{id}/usage: the broadcasts (campaigns) that target the segment; `agents` is always empty (see shared/segments/usage.ts). */
import { endpoint } from '#shared/http/endpoint.ts';
import { segmentUsage } from '#shared/segments/service.ts';

export const { handler, spec } = endpoint(
  { route: 'GET /segments/{id}/usage', summary: 'Where a segment is used', responses: { 200: '{ data: { segmentId, campaigns: [broadcasts], agents: [] (always empty: the AI agent cannot target a segment) } }', 404: 'not found' } },
  async ({ auth, params }) => ({ status: 200, body: { data: await segmentUsage(auth.businessId, (params as any)?.id) } }),
);
