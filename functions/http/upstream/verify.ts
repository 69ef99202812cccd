/**
 * GET /webhooks/upstream: the upstream's subscription handshake (hub.mode, hub.verify_token, hub.challenge). The
 * token is compared with the stack secret's verifyToken by digest in constant time (a mismatch re-reads the secret
 * once: it may have been rotated); every wrong token is a 403.
 */
import { publicEndpoint } from '#shared/http/public-endpoint.ts';
import { forbidden, validationError } from '#shared/http/errors.ts';
import { withRotation } from '#shared/secrets/upstream-credentials.ts';
import { sameSecret } from '#shared/upstream/signature.ts';

export const { handler, spec } = publicEndpoint(
  {
    route: 'GET /webhooks/upstream',
    summary: 'Upstream webhook verification handshake',
    responses: { 200: 'the hub.challenge, as text/plain', 400: 'validation_error (right mode and token, no hub.challenge)', 403: 'forbidden (wrong mode or verify token)' },
  },
  async ({ event }) => {
    const q = event.queryStringParameters ?? {};
    const fail = () => forbidden('Webhook verification failed: wrong hub.mode or hub.verify_token');
    if (q['hub.mode'] !== 'subscribe') throw fail();
    const given = String(q['hub.verify_token'] ?? '');
    if (!(await withRotation(({ verifyToken }) => sameSecret(given, verifyToken))).ok) throw fail();
    if (!q['hub.challenge']) throw validationError({ 'hub.challenge': ['is required: the value to echo back'] }, 'Webhook verification needs hub.challenge');
    // The challenge is echoed as sent (Meta's is a number), as plain text that no browser may sniff into HTML.
    return { statusCode: 200, headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' }, body: String(q['hub.challenge']) };
  },
);
