/**
 * The HTTP API's `$default` route: every request that no row of shared/routes.ts takes, and the routes of the known
 * paths asked with a method they lack that another path's route would take (infra/api.ts). A known path asked with
 * another method answers 405 with `Allow`, anything else 404 `not_found` (decisions.md), as the local server does.
 * Public and stateless: it reads nothing but the route table.
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { routes } from '#shared/routes.ts';
import { noRouteReply, routeMatcher } from '#shared/http/route-match.ts';
import type { Reply } from '#shared/http/reply.ts';

const match = routeMatcher(routes);

export const handler = async (event: APIGatewayProxyEventV2): Promise<Reply> => {
  const method = event.requestContext.http.method;
  const path = event.rawPath;
  const found = match(method, path);
  return noRouteReply(method, path, found && 'allowed' in found ? found.allowed : [], event.requestContext.requestId);
};
