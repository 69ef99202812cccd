/** GET /{version}/{id}/message_templates: the business's templates, as the Cloud API lists them. */
import { endpoint } from '#shared/http/endpoint.ts';
import { graphPath, requireOwnWaba, toGraphReply } from '#shared/cloud-api/graph.ts';
import { listTemplates } from '#shared/upstream/client.ts';

export const { handler, spec } = endpoint(
  {
    route: 'GET /{version}/{id}/message_templates',
    summary: "Cloud API compatible: the business's message templates → { data: [{ id, name, language, status, category, components }], paging }",
    params: graphPath,
    errorReply: toGraphReply,
    responses: { 200: 'Cloud API template list', 404: "Graph error code 100: the WABA id is not this business's" },
  },
  async ({ auth, params }) => {
    await requireOwnWaba(auth.businessId, params.id, 'GET');
    return { status: 200, body: { data: await listTemplates(auth.businessId, params.id), paging: { cursors: {} } } };
  },
);
