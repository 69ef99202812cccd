/**
 * `publicEndpoint`: the pipeline (shared/http/pipeline.ts) of a route without API-key auth (`scope: null` in
 * shared/routes.ts: the reference pages, the upstream webhook, which authenticates by its own signature or
 * token). It imports neither the key store nor the rate limiter, so these functions' bundles carry no table
 * client unless their own code uses the table (infra/needs.ts grants follow the bundle).
 */
import { buildEndpoint, type AnySchema, type EndpointSpec, type Out, type Run } from './pipeline.ts';

export function publicEndpoint<B extends AnySchema | undefined = undefined, Q extends AnySchema | undefined = undefined, P extends AnySchema | undefined = undefined>(
  spec: EndpointSpec<B, Q, P>,
  run: Run<Out<B>, Out<Q>, Out<P>>,
) {
  return buildEndpoint(spec, run, (route) => {
    if (route.scope !== null) throw new Error(`${spec.route} takes an API key (scope ${route.scope}): use endpoint(), not publicEndpoint()`);
    return [];
  });
}
