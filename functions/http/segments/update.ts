/** PATCH /segments/{id}: name, description, color or rules; a different `type` is ignored (typeChangeIgnored). */
import { endpoint } from '#shared/http/endpoint.ts';
import { loadSegment, updateSegment } from '#shared/segments/service.ts';
import { updateSegmentBody } from '#shared/segments/schemas.ts';
import { parseOrInvalid, invalidFromFieldErrors } from '#shared/segments/errors.ts';

export const { handler, spec } = endpoint(
  { route: 'PATCH /segments/{id}', invalid: invalidFromFieldErrors, summary: 'Update a segment', responses: { 200: '{ data: Segment }', 404: 'not found' } },
  async ({ auth, params, body }) => {
    const record = await loadSegment(auth.businessId, (params as any)?.id); // the 404 comes before any body error
    // No body is an empty change; a body of null or an array is no object.
    const input = parseOrInvalid(updateSegmentBody, body === undefined ? {} : body);
    return { status: 200, body: { data: await updateSegment(auth.businessId, record, input) } };
  },
);
