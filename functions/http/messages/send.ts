/** POST /messages/v1: send a message of any type (service style or upstream style), or a read receipt. */
import { endpoint } from '#shared/http/endpoint.ts';
import { prefetchSendContext, send, type SendOptions } from '#shared/messages/send.ts';
import { isReadReceipt, markRead } from '#shared/messages/read-receipt.ts';

export const { handler, spec } = endpoint(
  {
    route: 'POST /messages/v1',
    summary: 'Send a message (text, media, template, interactive, location, contacts, reaction), or mark a received message read ({ messaging_product, status: "read", message_id, typing_indicator? })',
    responses: {
      200: 'Send result; for a read receipt { success: true }',
      202: 'Media being prepared: data.status queued; the outcome arrives as message.sent or message.failed',
      400: 'validation_error, invalid_template_parameters, or an upstream delivery failure (data.id, data.status failed)',
      403: 'MEDIA_PERMISSION_DENIED',
      413: 'media_too_large',
      404: 'read receipt: no message received by this business has that id',
      422: 'Idempotency-Key reused with another body',
      409: 'idempotency_in_progress: the first request with this Idempotency-Key is still being sent',
      502: 'upstream_unavailable: the upstream did not accept the message after retries (stored failed, retryable); 429 upstream_throttled when it throttles the number',
    },
    // The business, its AI settings and the recipient's send route are read beside the rate limit.
    prefetch: ({ auth, body }) => prefetchSendContext(auth.businessId, body),
  },
  async ({ auth, body, headers, prefetched }) => {
    if (isReadReceipt(body)) return { status: 200, body: await markRead(auth.businessId, body) };
    const idempotencyKey = headers['idempotency-key'];
    const context = Promise.resolve(prefetched as Awaited<NonNullable<SendOptions['context']>>);
    const outcome = await send(auth.businessId, body, { sentBy: 'api', context, ...(idempotencyKey !== undefined ? { idempotencyKey } : {}) });
    return { status: outcome.status, body: outcome.body, headers: outcome.headers };
  },
);
