/** GET /{version}/{id}: the Cloud API's media object of a media id of the business (uploaded through the service, or in a customer's message). */
import { endpoint } from '#shared/http/endpoint.ts';
import { baseUrlOf } from '#shared/http/base-url.ts';
import { graphPath, mediaQuery, toGraphReply } from '#shared/cloud-api/graph.ts';
import { cloudMediaInfo } from '#shared/cloud-api/media.ts';

export const { handler, spec } = endpoint(
  {
    route: 'GET /{version}/{id}',
    summary: 'Cloud API compatible: media id → { messaging_product, url (valid 5 minutes), mime_type, sha256, file_size, id }',
    params: graphPath,
    query: mediaQuery,
    errorReply: toGraphReply,
    responses: { 200: 'Cloud API media object', 400: "Graph error code 100, subcode 33: not a media id of this business's (Meta's unknown object)" },
  },
  async ({ auth, params, query, event }) => {
    return { status: 200, body: await cloudMediaInfo(auth.businessId, params.id, query.phone_number_id, baseUrlOf(event)) };
  },
);
