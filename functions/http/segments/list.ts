/** GET /segments: every segment of the business with live counts (one projection read serves them all). */
import { endpoint } from '#shared/http/endpoint.ts';
import { listSegmentViews } from '#shared/segments/service.ts';

export const { handler, spec } = endpoint(
  { route: 'GET /segments', summary: 'List segments with live counts', responses: { 200: '{ data: [Segment] }' } },
  async ({ auth }) => ({ status: 200, body: { data: await listSegmentViews(auth.businessId) } }),
);
