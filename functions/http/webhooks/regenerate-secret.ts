/** POST /user-webhooks/{id}/regenerate-secret: a new signing secret; the old one stops verifying at once. */
import { endpoint } from '#shared/http/endpoint.ts';
import { idParams } from '#shared/http/schemas.ts';
import { regenerateSecret } from '#shared/webhooks/service.ts';

export const { handler, spec } = endpoint(
  {
    route: 'POST /user-webhooks/{id}/regenerate-secret',
    summary: 'Regenerate the signing secret',
    params: idParams,
    bodyKind: 'none',
    responses: { 200: '{ data: subscription & { secret } }', 404: 'not_found' },
  },
  async ({ auth, params }) => ({ status: 200, body: { data: await regenerateSecret(auth.businessId, params.id) } }),
);
