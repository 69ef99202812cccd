/**
 * The request pipeline every HTTP Lambda runs, on middy:
 *   error mapping → request id + logging → guards (auth + scope, rate limit) → body parsing → validation → handler → JSON reply.
 *
 * The guards are given by the caller: `endpoint` (shared/http/endpoint.ts) for API-key routes, `publicEndpoint`
 * (shared/http/public-endpoint.ts) for the routes that authenticate otherwise or not at all, whose bundles then carry
 * no table client (and whose functions get no table grant).
 */
import middy, { type MiddlewareObj } from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import * as v from 'valibot';
import { findRoute, type Route } from '#shared/routes.ts';
import { logger } from '#shared/log/logger.ts';
import { withInvocationEnd } from '#shared/lang/invocation-end.ts';
import { ConfigurationError } from '#shared/settings/env.ts';
import { ApiError, notFound, validationError, type FieldErrors } from './errors.ts';
import type { AuthContext } from '#shared/auth/context.ts';
import { jsonBody, multipartBody, unusedBody, type BodyKind } from './middleware/body.ts';
import { json, type HandlerResult, type Reply } from './reply.ts';
import { state } from './state.ts';
import { toFieldErrors } from './validation.ts';
import { toRequestFailure } from '#shared/upstream/error-codes.ts';
import type { UpstreamError } from '#shared/upstream/client.ts';

export type AnySchema = v.GenericSchema | v.GenericSchemaAsync;

export interface EndpointSpec<B extends AnySchema | undefined, Q extends AnySchema | undefined, P extends AnySchema | undefined> {
  /** `METHOD /path` exactly as in shared/routes.ts. */
  route: string;
  summary?: string;
  body?: B;
  query?: Q;
  params?: P;
  bodyKind?: BodyKind;
  /**
   * Turns validation failures into the area's error shape (default: 400 `validation_error` with `details` for a body or
   * query, 404 `not_found` for a path: an id that is not one names nothing).
   */
  invalid?: (details: FieldErrors, where: 'body' | 'query' | 'params') => ApiError;
  /** Status codes and descriptions for the OpenAPI document. */
  responses?: Record<number, string>;
  /**
   * Reads the handler needs first and that change nothing, started beside the rate-limit decision so that
   * they cost no round trip of their own; the result reaches `run` as `prefetched`. Must not throw on bad input.
   */
  prefetch?: (input: { auth: AuthContext; body: unknown; params: Record<string, string | undefined> }) => Promise<unknown>;
  /** Reshapes every error reply of this endpoint (the Cloud-API-compatible routes answer Graph error bodies). */
  errorReply?: (reply: Reply, event: APIGatewayProxyEventV2, error: unknown) => Reply;
}

export type Out<S> = S extends AnySchema ? v.InferOutput<S> : undefined;

export interface RequestContext<B, Q, P> {
  body: B;
  query: Q;
  params: P;
  auth: AuthContext;
  headers: Record<string, string | undefined>;
  event: APIGatewayProxyEventV2;
  requestId: string;
  /** What the spec's `prefetch` read. */
  prefetched?: unknown;
}

export type Run<B, Q, P> = (ctx: RequestContext<B, Q, P>) => Promise<HandlerResult | Reply>;

const isReply = (x: unknown): x is Reply => typeof x === 'object' && x !== null && 'statusCode' in x;

const validate = async (schema: AnySchema | undefined, value: unknown, where: 'body' | 'query' | 'params', invalid: EndpointSpec<any, any, any>['invalid']) => {
  if (!schema) return value;
  // Every body is a JSON object (valibot's object schemas would take an array: it is an object to `typeof`).
  const parsed = where === 'body' && Array.isArray(value)
    ? { success: false as const, issues: [{ message: 'The body must be a JSON object, not an array' } as v.BaseIssue<unknown>] }
    : await v.safeParseAsync(schema, value);
  if (parsed.success) return parsed.output;
  const details = toFieldErrors(parsed.issues);
  if (invalid) throw invalid(details, where);
  throw where === 'params' ? notFound() : validationError(details, `Invalid ${where}: ${Object.keys(details).join(', ')}`);
};

const TIMED_OUT = 'The request ran out of time before it could answer and may still have taken effect: read before repeating it (a send repeated with its Idempotency-Key is safe)';

const TABLE_THROTTLING = new Set(['ProvisionedThroughputExceededException', 'ThrottlingException', 'RequestLimitExceeded']);

/** Maps every error to a JSON reply; an unknown error is a bug, logged with its stack and answered 500. */
export const toReply = (err: unknown, extraHeaders: Record<string, string> = {}): Reply => {
  if (err instanceof ApiError) return json(err.status, err.body, { ...extraHeaders, ...err.headers });
  // An upstream call that failed outside a send (whose failures are recorded and answered by the send itself).
  if ((err as Error)?.name === 'UpstreamError') {
    logger.warn('upstream call failed', { error: err as Error });
    const failure = toRequestFailure(err as UpstreamError);
    return json(failure.status, failure.body, { ...extraHeaders, ...failure.headers });
  }
  const status = (err as any)?.statusCode ?? (err as any)?.status;
  // Middlewares from middy raise http-errors (e.g. a multipart parse failure): client errors stay client errors.
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return json(status, { error: status === 413 ? 'payload_too_large' : 'validation_error', message: (err as Error).message }, extraHeaders);
  }
  // The table still throttling after the SDK's own retries is capacity, not a bug: a retryable 503.
  if (TABLE_THROTTLING.has((err as Error)?.name)) {
    logger.warn('table throttled', { error: err as Error });
    return json(503, { error: 'service_unavailable', message: 'The service is busy; retry shortly' }, { ...extraHeaders, 'Retry-After': '1' });
  }
  // middy's early time-out (just before Lambda's own): the work took too long, typically under heavy contention. What
  // it had begun may still land (a create, a send), so the outcome is unknown, as with API Gateway's own time-out: 504.
  if ((err as Error)?.name === 'TimeoutError') {
    logger.warn('request timed out', { error: err as Error });
    return json(504, { error: 'timeout', message: TIMED_OUT }, extraHeaders);
  }
  // A setting the function needs is missing or malformed: the operator's defect, named in the log only. The client
  // (a business calling the API) gets the kind of failure but not the deployment's variable names.
  if (err instanceof ConfigurationError) {
    logger.error('configuration error', { variable: err.variable, error: err });
    return json(500, { error: 'configuration_error', message: 'The service is not configured correctly; its operator can find the missing setting in the logs' }, extraHeaders);
  }
  logger.error('unhandled error', { error: err as Error });
  return json(500, { error: 'internal_error', message: 'An unexpected error occurred' }, extraHeaders);
};

/**
 * The query parameters given a value: `?limit=` is the default limit, as an empty `cursor=` is the first page (clients
 * that build URLs with every parameter send the empty ones).
 */
const givenQuery = (event: APIGatewayProxyEventV2): Record<string, string> =>
  Object.fromEntries(Object.entries(event.queryStringParameters ?? {}).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ''));

export type Guards = (route: Route) => MiddlewareObj<APIGatewayProxyEventV2, Reply>[];

export function buildEndpoint<B extends AnySchema | undefined = undefined, Q extends AnySchema | undefined = undefined, P extends AnySchema | undefined = undefined>(
  spec: EndpointSpec<B, Q, P>,
  run: Run<Out<B>, Out<Q>, Out<P>>,
  guards: Guards,
) {
  const route: Route = findRoute(spec.route);
  const bodyKind: BodyKind = spec.bodyKind ?? (route.method === 'GET' || route.method === 'DELETE' ? 'none' : 'json');

  const core = async (event: APIGatewayProxyEventV2, context: Context): Promise<Reply> => {
    const s = state(event);
    if (s.bodyProblem) {
      // Before anything reads the body (a walk of JSON nested past the bounds would overflow the stack).
      await s.admission;
      const details = { _body: [s.bodyProblem] };
      throw spec.invalid ? spec.invalid(details, 'body') : validationError(details, s.bodyProblem);
    }
    const [, prefetched] = await Promise.all([s.admission, spec.prefetch && s.auth ? spec.prefetch({ auth: s.auth, body: s.body, params: event.pathParameters ?? {} }) : undefined]);
    const body = await validate(spec.body, s.body, 'body', spec.invalid);
    const query = await validate(spec.query, givenQuery(event), 'query', spec.invalid);
    const params = await validate(spec.params, event.pathParameters ?? {}, 'params', spec.invalid);
    const out = await withInvocationEnd(context.getRemainingTimeInMillis(), () => run({
      body: body as Out<B>,
      query: query as Out<Q>,
      params: params as Out<P>,
      auth: s.auth as AuthContext,
      headers: event.headers ?? {},
      event,
      requestId: event.requestContext?.requestId ?? context.awsRequestId,
      prefetched,
    }));
    const reply = isReply(out) ? out : json(out.status, out.body, out.headers);
    reply.headers = { ...s.rateHeaders, ...reply.headers };
    return reply;
  };

  const stack = middy<APIGatewayProxyEventV2, Reply>()
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use({
      // The outermost error mapper: also catches what auth, limits and parsing throw.
      onError: async (request) => {
        const s = state(request.event);
        // A refusal by the rate limit answers first, as when it ran before body parsing.
        const refused = await s.admission?.then(() => undefined, (err: unknown) => err);
        const error = refused ?? request.error;
        const reply = toReply(error, s.rateHeaders);
        request.response = spec.errorReply ? spec.errorReply(reply, request.event, error) : reply;
      },
    })
    .use({
      before: async (request) => {
        logger.appendKeys({ requestId: request.event.requestContext?.requestId, route: spec.route });
      },
    });
  for (const guard of guards(route)) stack.use(guard);
  if (bodyKind === 'json') stack.use(jsonBody());
  if (bodyKind === 'multipart') stack.use(multipartBody());
  // A POST without a body refuses one that is not JSON (public endpoints read theirs: the upstream receiver checks its signature first).
  if (bodyKind === 'none' && route.method !== 'GET' && route.method !== 'DELETE' && route.scope !== null) stack.use(unusedBody());

  return { handler: stack.handler(core), spec: { ...spec, method: route.method, path: route.path, scope: route.scope, bodyKind } };
}

export type EndpointModule = ReturnType<typeof buildEndpoint>;
