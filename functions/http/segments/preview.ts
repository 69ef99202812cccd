/** POST /segments/preview: count and a sample of what `{ rules }` selects; stores nothing. */
import { endpoint } from '#shared/http/endpoint.ts';
import { previewRules } from '#shared/segments/service.ts';
import { previewBody } from '#shared/segments/schemas.ts';
import { invalidFromFieldErrors } from '#shared/segments/errors.ts';

export const { handler, spec } = endpoint(
  {
    route: 'POST /segments/preview',
    summary: 'Preview segment rules',
    body: previewBody,
    invalid: invalidFromFieldErrors,
    responses: { 200: '{ data: { count, countEstimated?, preview: [Contact], rulesFormat } }', 400: 'format or rule error', 503: 'selection_timeout' },
  },
  async ({ auth, body }) => ({ status: 200, body: { data: await previewRules(auth.businessId, body.rules, body.limit) } }),
);
