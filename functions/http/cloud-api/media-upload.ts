/** POST /{version}/{id}/media: the Cloud API's media upload (multipart `messaging_product`, `file`, `type`). */
import * as v from 'valibot';
import { endpoint } from '#shared/http/endpoint.ts';
import { graphPath, requireOwnNumber, toGraphReply } from '#shared/cloud-api/graph.ts';
import { uploadCloudMedia } from '#shared/cloud-api/media.ts';
import { validationError } from '#shared/http/errors.ts';

const whatsapp = v.optional(v.literal('whatsapp', 'messaging_product must be "whatsapp"'));

export const { handler, spec } = endpoint(
  {
    route: 'POST /{version}/{id}/media',
    summary: 'Cloud API compatible: upload media (multipart messaging_product=whatsapp, file, type=<MIME type>) → { id }',
    bodyKind: 'multipart',
    params: graphPath,
    // Graph reads a parameter from the query string as from the form (whatsapp-api-js sends messaging_product there).
    query: v.looseObject({ messaging_product: whatsapp }),
    body: v.looseObject({
      messaging_product: whatsapp,
      type: v.optional(v.string()),
      file: v.looseObject({ content: v.instance(Buffer, 'must be a file'), filename: v.optional(v.string()), mimetype: v.optional(v.string()) }, 'is required: a file part named "file"'),
    }, 'multipart fields messaging_product and file are required (type is optional: the media kind follows the bytes)'),
    errorReply: toGraphReply,
    responses: {
      200: '{ id }: the media id to send with',
      400: "Graph error code 100 (missing field, file type or size outside the rules of its media kind), or code 100 subcode 33: the phone number id is not this business's (Meta's unknown object)",
    },
  },
  async ({ auth, body, query, params }) => {
    if (!body.messaging_product && !query.messaging_product) {
      throw validationError({ messaging_product: ['is required: "whatsapp", as a form field or a query parameter'] }, 'messaging_product is required');
    }
    await requireOwnNumber(auth.businessId, params.id, 'POST');
    return { status: 200, body: await uploadCloudMedia(auth.businessId, body.file, body.type) };
  },
);
