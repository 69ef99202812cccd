/** GET /segments/{id}: the segment with a live count and a page of its contacts (`limit`, `offset`). */
import { endpoint } from '#shared/http/endpoint.ts';
import { getSegmentDetail, loadSegment } from '#shared/segments/service.ts';
import { detailQuery } from '#shared/segments/schemas.ts';
import { parseOrInvalid } from '#shared/segments/errors.ts';

export const { handler, spec } = endpoint(
  { route: 'GET /segments/{id}', summary: 'Get a segment and its contacts', responses: { 200: '{ data: Segment & { contacts, pagination } }', 404: 'not found' } },
  async ({ auth, params, query }) => {
    const record = await loadSegment(auth.businessId, (params as any)?.id); // the 404 comes before any query-string error
    const page = parseOrInvalid(detailQuery, query ?? {});
    return { status: 200, body: { data: await getSegmentDetail(auth.businessId, record, page) } };
  },
);
