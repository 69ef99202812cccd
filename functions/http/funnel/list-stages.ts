/** GET /funnel/v1/stages: the funnel's stages by position, with their maintained contact counts. */
import { endpoint } from '#shared/http/endpoint.ts';
import { listStages } from '#shared/funnel/service.ts';

export const { handler, spec } = endpoint(
  { route: 'GET /funnel/v1/stages', summary: 'List the funnel stages', responses: { 200: '{ stages: [Funnel stage] }' } },
  // Read consistently: a stage just created, deleted or moved shows in the list that follows (the funnel is at most 50 small items).
  async ({ auth }) => ({ status: 200, body: { stages: await listStages(auth.businessId, true) } }),
);
