/** GET /broadcasts/v1/{id}/recipients: per-recipient outcomes, paginated, filterable by status. */
import * as v from 'valibot';
import { endpoint } from '#shared/http/endpoint.ts';
import { uuid } from '#shared/http/schemas.ts';
import { notFound, validationError } from '#shared/http/errors.ts';
import { recipientsQuery } from '#shared/broadcasts/schemas.ts';
import { listRecipientViews } from '#shared/broadcasts/service.ts';

export const { handler, spec } = endpoint(
  {
    route: 'GET /broadcasts/v1/{id}/recipients',
    summary: 'List the recipients of a broadcast with their outcome',
    params: v.object({ id: uuid() }),
    query: recipientsQuery,
    invalid: (details, where) => (where === 'params' ? notFound('Broadcast not found') : validationError(details, `Invalid query: ${Object.keys(details).join(', ')}`)),
    responses: { 200: '{ data: [Recipient], next_cursor }', 400: 'validation_error (limit, status) | invalid_cursor', 404: 'not_found' },
  },
  async ({ auth, params, query }) => ({ status: 200, body: await listRecipientViews(auth.businessId, params.id, query) }),
);
