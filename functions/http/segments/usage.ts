/** GET /segments/{id}/usage: the broadcasts (campaigns) and AI agents that target the segment. */
import { endpoint } from '#shared/http/endpoint.ts';
import { segmentUsage } from '#shared/segments/service.ts';

export const { handler, spec } = endpoint(
  { route: 'GET /segments/{id}/usage', summary: 'Where a segment is used', responses: { 200: '{ data: { segmentId, campaigns: [], agents: [] } }', 404: 'not found' } },
  async ({ auth, params }) => ({ status: 200, body: { data: await segmentUsage(auth.businessId, (params as any)?.id) } }),
);
