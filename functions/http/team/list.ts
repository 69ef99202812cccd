/** GET /team/v1: the business's human agents. */
import { endpoint } from '#shared/http/endpoint.ts';
import { listAgents } from '#shared/team/repository.ts';

export const { handler, spec } = endpoint(
  { route: 'GET /team/v1', summary: 'List the team agents', responses: { 200: '{ agents: [Team agent] }' } },
  async ({ auth }) => ({ status: 200, body: { agents: await listAgents(auth.businessId) } }),
);
