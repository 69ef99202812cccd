/** POST /segments/{id}/evaluate: recomputes and stores the segment's count. */
import { endpoint } from '#shared/http/endpoint.ts';
import { invalidFromFieldErrors } from '#shared/segments/errors.ts';
import { evaluateSegment } from '#shared/segments/service.ts';

export const { handler, spec } = endpoint(
  { route: 'POST /segments/{id}/evaluate', invalid: invalidFromFieldErrors, summary: 'Recalculate a segment count', bodyKind: 'none', responses: { 200: '{ data: Segment & { evaluatedAt } }', 404: 'not found' } },
  async ({ auth, params }) => ({ status: 200, body: { data: await evaluateSegment(auth.businessId, (params as any)?.id) } }),
);
