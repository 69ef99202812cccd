/** DELETE /{version}/{id}: forgets a media id uploaded through the service (Cloud API compatible). */
import { endpoint } from '#shared/http/endpoint.ts';
import { graphPath, mediaQuery, toGraphReply } from '#shared/cloud-api/graph.ts';
import { deleteCloudMedia } from '#shared/cloud-api/media.ts';

export const { handler, spec } = endpoint(
  {
    route: 'DELETE /{version}/{id}',
    summary: 'Cloud API compatible: delete a media id → { success: true }',
    params: graphPath,
    query: mediaQuery,
    errorReply: toGraphReply,
    responses: { 200: '{ success: true }', 400: "Graph error code 100, subcode 33: not a media id of this business's (Meta's unknown object)" },
  },
  async ({ auth, params, query }) => {
    return { status: 200, body: await deleteCloudMedia(auth.businessId, params.id, query.phone_number_id) };
  },
);
