/**
 * The HTTP API: one route per row of the route table, each to the function of its handler module, and the
 * `$default` route (every request no row matches) to the not-found function, which answers 404 or 405 with `Allow`
 * exactly as the local server does. API Gateway picks a route by method and path, so a known path asked with a method
 * it lacks would reach another path's route of that method (`DELETE /team/v1` → `DELETE /{version}/{id}`): each such
 * pair has a route of its own to the not-found function (shadowedMethods).
 */
import { RemovalPolicy, type Stack, aws_apigatewayv2 as apigw, aws_apigatewayv2_integrations as integrations, aws_lambda as lambda, aws_logs as logs } from 'aws-cdk-lib';
import { routes } from '../shared/routes.ts';
import { shadowedMethods } from '../shared/http/route-match.ts';
import { pascal } from './names.ts';

export function createApi(stack: Stack, functions: Map<string, lambda.IFunction>, notFound: lambda.IFunction): apigw.HttpApi {
  // One invoke permission for all of its routes (each route's own would add some thirty resources to the stack).
  const notFoundIntegration = new integrations.HttpLambdaIntegration('NotFoundIntegration', notFound, { scopePermissionToRoute: false });
  const api = new apigw.HttpApi(stack, 'Api', {
    description: 'WhatsApp Business messaging and CRM API',
    createDefaultStage: false,
    defaultIntegration: notFoundIntegration,
  });
  const stage = api.addStage('DefaultStage', {
    stageName: '$default',
    autoDeploy: true,
    // A backstop behind the per-key limits enforced in the functions.
    throttle: { rateLimit: 500, burstLimit: 1000 },
  });
  const accessLogGroup = new logs.LogGroup(stack, 'ApiAccessLogs', { retention: logs.RetentionDays.THREE_MONTHS, removalPolicy: RemovalPolicy.DESTROY });
  (stage.node.defaultChild as apigw.CfnStage).accessLogSettings = {
    destinationArn: accessLogGroup.logGroupArn,
    format: JSON.stringify({
      requestId: '$context.requestId',
      ip: '$context.identity.sourceIp',
      requestTime: '$context.requestTime',
      routeKey: '$context.routeKey',
      status: '$context.status',
      latency: '$context.responseLatency',
      integrationError: '$context.integrationErrorMessage',
    }),
  };

  const apiIntegrations = new Map<string, integrations.HttpLambdaIntegration>();
  for (const route of routes) {
    let integration = apiIntegrations.get(route.handler);
    if (!integration) {
      integration = new integrations.HttpLambdaIntegration(`${pascal(route.handler)}Integration`, functions.get(route.handler)!);
      apiIntegrations.set(route.handler, integration);
    }
    api.addRoutes({ path: route.path, methods: [route.method as apigw.HttpMethod], integration });
  }
  for (const shadowed of shadowedMethods(routes)) {
    api.addRoutes({ path: shadowed.path, methods: [shadowed.method as apigw.HttpMethod], integration: notFoundIntegration });
  }
  return api;
}
