/** GET /webhooks/upstream: the upstream's subscription handshake (hub.mode, hub.verify_token, hub.challenge). */
import { publicEndpoint } from '#shared/http/public-endpoint.ts';
import { forbidden } from '#shared/http/errors.ts';
import { config } from '#shared/config.ts';
import { timingSafeEqual } from 'node:crypto';

const sameSecret = (a: string, b: string) => a.length === b.length && a.length > 0 && timingSafeEqual(Buffer.from(a), Buffer.from(b));

export const { handler, spec } = publicEndpoint(
  {
    route: 'GET /webhooks/upstream',
    summary: 'Upstream webhook verification handshake',
    responses: { 200: 'the hub.challenge, as text/plain', 403: 'forbidden (wrong mode or verify token)' },
  },
  async ({ event }) => {
    const q = event.queryStringParameters ?? {};
    if (q['hub.mode'] !== 'subscribe' || !sameSecret(String(q['hub.verify_token'] ?? ''), config.upstreamVerifyToken) || !q['hub.challenge']) {
      throw forbidden('Webhook verification failed: wrong hub.mode or hub.verify_token');
    }
    return { statusCode: 200, headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' }, body: String(q['hub.challenge']) };
  },
);
