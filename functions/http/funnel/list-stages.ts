/** GET /funnel/v1/stages: the funnel's stages by position, with their maintained contact counts. */
import { endpoint } from '#shared/http/endpoint.ts';
import { listStages } from '#shared/funnel/service.ts';

export const { handler, spec } = endpoint(
  { route: 'GET /funnel/v1/stages', summary: 'List the funnel stages', responses: { 200: '{ stages: [Funnel stage] }' } },
  async ({ auth }) => ({ status: 200, body: { stages: await listStages(auth.businessId) } }),
);
