/**
 * POST /webhooks/upstream: upstream notifications (incoming messages, delivery statuses). The signature
 * (`X-Hub-Signature-256`, HMAC-SHA256 of the raw body with the stack secret's app secret) is checked in constant
 * time; a bad or missing one is a 401 and nothing is stored. A mismatch re-reads the secret once first (it may have
 * been rotated). While the app secret is a placeholder nothing is accepted: 401, a logged configuration error and
 * the `UpstreamAppSecretPlaceholder` metric. The body is acknowledged at once and processed by the upstream-events
 * worker, so the upstream never waits on the service's work. A body larger than a queue message (Meta's reach 3 MB)
 * is queued in parts of the same shape (shared/upstream/notification-parts.ts).
 */
import { publicEndpoint } from '#shared/http/public-endpoint.ts';
import { ApiError, invalidJson, unauthorized } from '#shared/http/errors.ts';
import { enqueue, enqueueAll, MAX_MESSAGE_BYTES } from '#shared/queue/queue.ts';
import { notificationParts } from '#shared/upstream/notification-parts.ts';
import { logger } from '#shared/log/logger.ts';
import { upstreamAppSecretPlaceholder } from '#shared/metrics/metrics.ts';
import { ConfigurationError } from '#shared/settings/env.ts';
import { isPlaceholderAppSecret, withRotation } from '#shared/secrets/upstream-credentials.ts';
import { isValidSignature } from '#shared/upstream/signature.ts';

/** A queue message's room for a body, less a margin for its attributes. */
const PART_BYTES = MAX_MESSAGE_BYTES - 16 * 1024;

export const { handler, spec } = publicEndpoint(
  {
    route: 'POST /webhooks/upstream',
    summary: 'Receive upstream webhooks (signed with X-Hub-Signature-256)',
    bodyKind: 'none',
    responses: { 200: '{ received: true }', 400: 'invalid_json', 401: 'unauthorized (bad or missing signature)' },
  },
  async ({ event, headers }) => {
    const raw = event.body ? (event.isBase64Encoded ? Buffer.from(event.body, 'base64') : Buffer.from(event.body, 'utf8')) : Buffer.alloc(0);
    const signature = headers['x-hub-signature-256'];
    const { ok, credentials } = await withRotation(({ appSecret }) => !isPlaceholderAppSecret(appSecret) && isValidSignature(raw, signature, appSecret));
    if (!ok) {
      if (isPlaceholderAppSecret(credentials.appSecret)) {
        upstreamAppSecretPlaceholder();
        logger.error('upstream webhook refused: the app secret is a placeholder', {
          error: new ConfigurationError('UPSTREAM_SECRET_ARN', `names a secret whose appSecret is a placeholder ("set-me"): put the Meta app's secret there`),
        });
      }
      throw unauthorized('Missing or invalid X-Hub-Signature-256');
    }
    let payload: unknown;
    try {
      payload = JSON.parse(raw.toString('utf8'));
    } catch {
      throw invalidJson();
    }
    if (!payload || typeof payload !== 'object' || Array.isArray(payload)) throw new ApiError(400, { error: 'invalid_json', message: 'The body must be a JSON object' });
    if (raw.length <= PART_BYTES) await enqueue('upstream-events', raw.toString('utf8'));
    else {
      const { parts, leftOut } = notificationParts(payload as Record<string, any>, PART_BYTES);
      if (leftOut > 0) logger.error('upstream webhook items too large for a queue message left out', { leftOut, bytes: raw.length });
      await enqueueAll('upstream-events', parts.map((message) => ({ message })));
    }
    return { status: 200, body: { received: true } };
  },
);
