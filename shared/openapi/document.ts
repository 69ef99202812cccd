/**
 * The OpenAPI 3.1 document, generated from the route table and the valibot schemas each handler module
 * exports as `spec` (the very schemas it validates with), so the reference cannot drift from the code.
 */
import { toJsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import { routes, type Route } from '#functions/routes.ts';
import { EVENT_NAMES } from '#shared/events/names.ts';
import { SCOPES } from '#shared/auth/scopes.ts';

export interface HandlerSpec {
  route: string;
  summary?: string;
  description?: string;
  body?: v.GenericSchema | v.GenericSchemaAsync;
  query?: v.GenericSchema | v.GenericSchemaAsync;
  params?: v.GenericSchema | v.GenericSchemaAsync;
  bodyKind?: 'json' | 'multipart' | 'none';
  responses?: Record<number, string>;
}

const schemaOf = (schema: unknown): Record<string, unknown> => {
  try {
    const out = toJsonSchema(schema as any, { errorMode: 'ignore', target: 'draft-2020-12', typeMode: 'input' }) as Record<string, unknown>;
    delete out.$schema;
    return out;
  } catch {
    return {};
  }
};

const errorSchema = {
  type: 'object',
  required: ['error'],
  properties: { error: { type: 'string' }, message: { type: 'string' }, details: {} },
};

const standardErrors = (route: Route): Record<string, unknown> => {
  const ref = { content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
  const out: Record<string, unknown> = {
    400: { description: 'Invalid request (validation_error, invalid_json, or the area\'s own error)', ...ref },
    404: { description: 'Not found', ...ref },
    500: { description: 'Internal error', ...ref },
  };
  if (route.scope) {
    out[401] = { description: 'Missing, malformed, revoked or unknown API key', ...ref };
    out[403] = { description: `The key lacks the scope ${route.scope}, or the resource belongs to another account`, ...ref };
    out[429] = {
      description: 'Rate limit exceeded',
      headers: { 'Retry-After': { schema: { type: 'integer' } } },
      content: { 'application/json': { schema: { $ref: '#/components/schemas/RateLimited' } } },
    };
  }
  return out;
};

const parametersOf = (route: Route, spec: HandlerSpec | undefined) => {
  const params: Record<string, unknown>[] = [];
  const pathSchema = spec?.params ? schemaOf(spec.params) : undefined;
  for (const m of route.path.matchAll(/\{(\w+)\}/g)) {
    const prop = (pathSchema?.properties as Record<string, unknown> | undefined)?.[m[1]];
    params.push({ name: m[1], in: 'path', required: true, schema: prop ?? { type: 'string', format: 'uuid' } });
  }
  if (spec?.query) {
    const q = schemaOf(spec.query);
    const required = new Set((q.required as string[] | undefined) ?? []);
    for (const [name, schema] of Object.entries((q.properties as Record<string, unknown>) ?? {})) {
      params.push({ name, in: 'query', required: required.has(name), schema });
    }
  }
  return params;
};

export function buildOpenApi(specs: Map<string, HandlerSpec | undefined>, serverUrl?: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const spec = specs.get(route.handler);
    const successes = Object.entries(spec?.responses ?? { 200: 'Success' }).filter(([code]) => Number(code) < 300);
    const errors = Object.entries(spec?.responses ?? {}).filter(([code]) => Number(code) >= 300);
    const responses: Record<string, unknown> = standardErrors(route);
    for (const [code, description] of successes) responses[code] = { description, content: { 'application/json': { schema: { type: 'object' } } } };
    for (const [code, description] of errors) responses[code] = { description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
    const operation: Record<string, unknown> = {
      operationId: `${route.method.toLowerCase()}${route.path.replace(/\{(\w+)\}/g, 'By-$1').split(/[^A-Za-z0-9]+/).map((p) => p && p[0].toUpperCase() + p.slice(1)).join('')}`,
      summary: spec?.summary ?? `${route.method} ${route.path}`,
      tags: [route.path.split('/')[1] || 'meta'],
      parameters: parametersOf(route, spec),
      responses,
      security: route.scope ? [{ apiKey: [route.scope] }] : [],
      'x-required-scope': route.scope,
      'x-rate-limit-class': route.limit,
    };
    if (spec?.description) operation.description = spec.description;
    if (spec?.body) {
      const contentType = spec.bodyKind === 'multipart' ? 'multipart/form-data' : 'application/json';
      operation.requestBody = { required: true, content: { [contentType]: { schema: schemaOf(spec.body) } } };
    }
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operation;
  }

  const webhooks: Record<string, unknown> = {};
  for (const name of EVENT_NAMES) {
    webhooks[name] = {
      post: {
        summary: `Event ${name}`,
        parameters: [
          { name: 'X-Webhook-Signature', in: 'header', required: true, schema: { type: 'string' }, description: 'hex HMAC-SHA256 of the body, keyed with the subscription secret' },
          { name: 'X-Webhook-Event', in: 'header', required: true, schema: { type: 'string', const: name } },
          { name: 'X-Webhook-Timestamp', in: 'header', required: true, schema: { type: 'string', format: 'date-time' } },
          { name: 'X-Webhook-ID', in: 'header', required: true, schema: { type: 'string' } },
        ],
        requestBody: {
          content: { 'application/json': { schema: { type: 'object', required: ['event', 'data'], properties: { event: { const: name }, data: { type: 'object' } } } } },
        },
        responses: { 200: { description: 'Any 2xx acknowledges the delivery' } },
      },
    };
  }

  return {
    openapi: '3.1.0',
    info: {
      title: 'WhatsApp Business messaging and CRM API',
      version: '1.0.0',
      description: 'Send every kind of WhatsApp message, upload media, run a sales funnel, manage contacts and segments, control the AI agent, and receive signed webhooks.',
    },
    servers: [{ url: serverUrl ?? '/' }],
    paths,
    webhooks,
    components: {
      securitySchemes: {
        apiKey: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'wak_ + 40 base62 characters',
          description: `API key with scopes: ${SCOPES.join(', ')}`,
        },
      },
      schemas: {
        Error: errorSchema,
        RateLimited: {
          type: 'object',
          required: ['error', 'message', 'retry_after'],
          properties: { error: { const: 'rate_limited' }, message: { type: 'string' }, retry_after: { type: 'integer' } },
        },
      },
    },
  };
}

/** Loads every handler module's `spec` (used locally, in tests and at synth time). */
export async function loadSpecs(load: (handler: string) => Promise<{ spec?: HandlerSpec }>): Promise<Map<string, HandlerSpec | undefined>> {
  const specs = new Map<string, HandlerSpec | undefined>();
  for (const handler of new Set(routes.map((r) => r.handler))) {
    try {
      specs.set(handler, (await load(handler)).spec);
    } catch {
      specs.set(handler, undefined);
    }
  }
  return specs;
}
