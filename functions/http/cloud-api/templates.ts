/** GET /{version}/{id}/message_templates: the business's templates, as the Cloud API lists them. */
import { endpoint } from '#shared/http/endpoint.ts';
import { graphPath, requireOwnWaba, toGraphReply } from '#shared/cloud-api/graph.ts';
import { selectTemplates, templateListQuery } from '#shared/cloud-api/template-list.ts';
import { listTemplates } from '#shared/upstream/client.ts';
import { baseUrlOf } from '#shared/http/base-url.ts';

export const { handler, spec } = endpoint(
  {
    route: 'GET /{version}/{id}/message_templates',
    summary: "Cloud API compatible: the business's message templates → { data: [{ id, name, language, status, category, components }], paging: { cursors }, summary? }; filters name, status, category, language, name_or_content; limit (default 25), after, before, fields, summary=total_count",
    params: graphPath,
    // Graph's filters, paging, fields and summary (shared/cloud-api/template-list.ts).
    query: templateListQuery,
    errorReply: toGraphReply,
    responses: { 200: 'Cloud API template list', 400: "Graph error code 100, subcode 33: the WABA id is not this business's (Meta's unknown object)" },
  },
  async ({ auth, params, query, event }) => {
    await requireOwnWaba(auth.businessId, params.id, 'GET');
    const base = baseUrlOf(event);
    const pageUrl = base ? (q: Record<string, string>) => `${base}${event.rawPath}?${new URLSearchParams(q)}` : undefined;
    return { status: 200, body: selectTemplates(await listTemplates(auth.businessId, params.id), query, pageUrl) };
  },
);
