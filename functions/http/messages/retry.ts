/** POST /messages/v1/{id}/retry: send a failed message again. */
import { endpoint } from '#shared/http/endpoint.ts';
import { idNotFound } from '#shared/http/validation.ts';
import { idParams } from '#shared/http/schemas.ts';
import { prefetchRetryContext, retryMessage, type RetryContext } from '#shared/messages/retry.ts';

export const { handler, spec } = endpoint(
  {
    route: 'POST /messages/v1/{id}/retry',
    summary: 'Retry a failed message',
    params: idParams,
    bodyKind: 'none',
    // An id that is not a UUID names no message.
    invalid: idNotFound('Message'),
    responses: { 200: '{ message, data: { id, messageId, status, retriedAt } }', 400: 'invalid_state or retry_failed', 404: 'not_found (also when the message\'s contact was deleted)', 503: 'service_unavailable: the media file is still being prepared; retry after Retry-After' },
    // The message and the business's number are read beside the rate limit.
    prefetch: ({ auth, params }) => prefetchRetryContext(auth.businessId, params.id),
  },
  async ({ auth, params, prefetched }) => ({ status: 200, body: await retryMessage(auth.businessId, params.id, prefetched as RetryContext | undefined) }),
);
