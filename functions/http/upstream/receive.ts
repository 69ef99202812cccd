/**
 * POST /webhooks/upstream: upstream notifications (incoming messages, delivery statuses). The signature
 * (`X-Hub-Signature-256`, HMAC-SHA256 of the raw body with the app secret) is checked in constant time; a
 * bad or missing one is a 401 and nothing is stored. The body is acknowledged at once and processed by the
 * upstream-events worker, so the upstream never waits on the service's work.
 */
import { publicEndpoint } from '#shared/http/public-endpoint.ts';
import { ApiError, invalidJson, unauthorized } from '#shared/http/errors.ts';
import { config } from '#shared/config.ts';
import { enqueue } from '#shared/queue/queue.ts';
import { isValidSignature } from '#shared/upstream/signature.ts';

export const { handler, spec } = publicEndpoint(
  {
    route: 'POST /webhooks/upstream',
    summary: 'Receive upstream webhooks (signed with X-Hub-Signature-256)',
    bodyKind: 'none',
    responses: { 200: '{ received: true }', 400: 'invalid_json', 401: 'unauthorized (bad or missing signature)' },
  },
  async ({ event, headers }) => {
    const raw = event.body ? (event.isBase64Encoded ? Buffer.from(event.body, 'base64') : Buffer.from(event.body, 'utf8')) : Buffer.alloc(0);
    if (!isValidSignature(raw, headers['x-hub-signature-256'], config.upstreamAppSecret)) {
      throw unauthorized('Missing or invalid X-Hub-Signature-256');
    }
    let payload: unknown;
    try {
      payload = JSON.parse(raw.toString('utf8'));
    } catch {
      throw invalidJson();
    }
    if (!payload || typeof payload !== 'object' || Array.isArray(payload)) throw new ApiError(400, { error: 'invalid_json', message: 'The body must be a JSON object' });
    await enqueue('upstream-events', raw.toString('utf8'));
    return { status: 200, body: { received: true } };
  },
);
