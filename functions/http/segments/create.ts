/** POST /segments: a static or dynamic segment; 201 `{ data: Segment }`. */
import { endpoint } from '#shared/http/endpoint.ts';
import { createSegment } from '#shared/segments/service.ts';
import { createSegmentBody } from '#shared/segments/schemas.ts';
import { invalidFromFieldErrors } from '#shared/segments/errors.ts';

export const { handler, spec } = endpoint(
  {
    route: 'POST /segments',
    summary: 'Create a segment',
    body: createSegmentBody,
    invalid: invalidFromFieldErrors,
    responses: { 201: '{ data: Segment }', 400: "{ error: 'Datos inválidos', details: [{ field, message }] }, { error } (rule error) or { error: 'segment_limit_reached', message } (1000 segments, 50 of them dynamic)" },
  },
  async ({ auth, body }) => ({ status: 201, body: { data: await createSegment(auth.businessId, body) } }),
);
