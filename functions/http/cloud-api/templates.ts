/** GET /{version}/{id}/message_templates: the business's templates, as the Cloud API lists them. */
import { endpoint } from '#shared/http/endpoint.ts';
import * as v from 'valibot';
import { graphPath, requireOwnWaba, toGraphReply } from '#shared/cloud-api/graph.ts';
import { listTemplates } from '#shared/upstream/client.ts';

export const { handler, spec } = endpoint(
  {
    route: 'GET /{version}/{id}/message_templates',
    summary: "Cloud API compatible: the business's message templates → { data: [{ id, name, language, status, category, components }], paging }",
    params: graphPath,
    // Meta's "get template by name": ?name= narrows the list.
    query: v.looseObject({ name: v.optional(v.string()) }),
    errorReply: toGraphReply,
    responses: { 200: 'Cloud API template list', 400: "Graph error code 100, subcode 33: the WABA id is not this business's (Meta's unknown object)" },
  },
  async ({ auth, params, query }) => {
    await requireOwnWaba(auth.businessId, params.id, 'GET');
    const templates = await listTemplates(auth.businessId, params.id);
    const data = query.name === undefined ? templates : templates.filter((t) => t.name === query.name);
    return { status: 200, body: { data, paging: { cursors: {} } } };
  },
);
