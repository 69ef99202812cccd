/**
 * Test helpers: a business with a key, and handler invocation with real API Gateway HTTP API events
 * (the same event shape the local server and API Gateway produce).
 */
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { createBusiness } from '#shared/business/repository.ts';
import { createApiKey } from '#shared/auth/api-keys.ts';
import { SCOPES, type Scope } from '#shared/auth/scopes.ts';
import { routes } from '#shared/routes.ts';
import { functionNameOf, lambdaContext, routeContext } from '#infra/local/lambda/context.ts';

export interface TestTenant {
  businessId: string;
  phoneNumberId: string;
  apiKey: string;
  keyId: string;
}

/** A new business (with its phone number) and an API key of `scopes` (all by default). */
export async function newTenant(scopes: readonly Scope[] = SCOPES, name = `Test business ${randomUUID().slice(0, 6)}`): Promise<TestTenant> {
  const business = await createBusiness(name);
  const key = await createApiKey(business.businessId, [...scopes]);
  return { businessId: business.businessId, phoneNumberId: business.phoneNumberId!, apiKey: key.apiKey, keyId: key.keyId };
}

export interface InvokeInput {
  apiKey?: string;
  headers?: Record<string, string>;
  body?: unknown;
  rawBody?: string;
  /** A binary body (a multipart upload), which API Gateway hands over base64-encoded. */
  binaryBody?: Buffer;
  query?: Record<string, string>;
  params?: Record<string, string>;
  /** The function's time-out for this invocation (default: as deployed). */
  timeoutMs?: number;
}

export interface InvokeResult {
  status: number;
  headers: Record<string, string>;
  body: any;
}

const routeOf = (routeKey: string) => {
  const route = routes.find((r) => `${r.method} ${r.path}` === routeKey);
  if (!route) throw new Error(`no route ${routeKey}`);
  return route;
};

/** The API Gateway HTTP API event of a request to `routeKey` ("METHOD /path"). */
function apiGatewayEvent(routeKey: string, input: InvokeInput = {}): APIGatewayProxyEventV2 {
  const route = routeOf(routeKey);
  let rawPath = route.path;
  for (const [k, val] of Object.entries(input.params ?? {})) rawPath = rawPath.replace(`{${k}}`, encodeURIComponent(val));
  const headers: Record<string, string> = { 'content-type': 'application/json', ...lower(input.headers ?? {}) };
  if (input.apiKey) headers.authorization = `Bearer ${input.apiKey}`;
  const body = input.binaryBody?.toString('base64') ?? input.rawBody ?? (input.body === undefined ? undefined : JSON.stringify(input.body));
  return {
    version: '2.0',
    routeKey,
    rawPath,
    rawQueryString: new URLSearchParams(input.query ?? {}).toString(),
    headers,
    queryStringParameters: input.query,
    pathParameters: input.params,
    requestContext: {
      accountId: '000000000000',
      apiId: 'test',
      domainName: 'test',
      domainPrefix: 'test',
      http: { method: route.method, path: rawPath, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'jest' },
      requestId: randomUUID(),
      routeKey,
      stage: '$default',
      time: new Date().toUTCString(),
      timeEpoch: Date.now(),
    },
    body,
    isBase64Encoded: input.binaryBody !== undefined,
  };
}

/** Invokes the handler of `routeKey` ("METHOD /path") as API Gateway would. */
export async function invoke(routeKey: string, input: InvokeInput = {}): Promise<InvokeResult> {
  const route = routeOf(routeKey);
  const mod = await import(`../../functions/${route.handler}.ts`);
  const event = apiGatewayEvent(routeKey, input);
  const context = input.timeoutMs === undefined ? routeContext(route) : lambdaContext(functionNameOf(route.handler), { timeoutMs: input.timeoutMs });
  const out = await mod.handler(event, context);
  const text = out.body ?? '';
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    /* non-JSON body (e.g. the docs page) */
  }
  return { status: out.statusCode, headers: lower(out.headers ?? {}), body: parsed };
}

const lower = (h: Record<string, unknown>) => Object.fromEntries(Object.entries(h).map(([k, val]) => [k.toLowerCase(), String(val)]));
