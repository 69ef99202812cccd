/**
 * `endpoint`: the pipeline (shared/http/pipeline.ts) of a route that takes an API key — auth, the route's rate-limit
 * class, then its scope. A handler module declares its route (a row of shared/routes.ts), its valibot schemas
 * and a `run` function that calls an area service; it never touches DynamoDB or the upstream itself.
 */
import { authMiddleware, scopeMiddleware } from './middleware/auth.ts';
import { rateLimitMiddleware } from './middleware/rate-limit.ts';
import { isCloudApiRoute } from '#shared/cloud-api/route-kind.ts';
import { buildEndpoint, type AnySchema, type EndpointSpec, type Guards, type Out, type Run } from './pipeline.ts';

export { toReply, type EndpointModule, type EndpointSpec, type RequestContext, type Run } from './pipeline.ts';

const apiKeyGuards: Guards = (route) => [
  ...(route.scope ? [authMiddleware({ tokenInQuery: isCloudApiRoute(`${route.method} ${route.path}`) })] : []),
  ...(route.limit ? [rateLimitMiddleware(route.limit)] : []),
  ...(route.scope ? [scopeMiddleware(route.scope)] : []),
];

export function endpoint<B extends AnySchema | undefined = undefined, Q extends AnySchema | undefined = undefined, P extends AnySchema | undefined = undefined>(
  spec: EndpointSpec<B, Q, P>,
  run: Run<Out<B>, Out<Q>, Out<P>>,
) {
  return buildEndpoint(spec, run, apiKeyGuards);
}
