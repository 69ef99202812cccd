/**
 * The OpenAPI 3.1 document, generated from the route table and the valibot schemas each handler module
 * exports as `spec` (the very schemas it validates with), so the reference cannot drift from the code.
 */
import { toJsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import { routes, type Route } from '#shared/routes.ts';
import { EVENT_NAMES } from '#shared/events/names.ts';
import { TEST_EVENT } from '#shared/webhooks/model.ts';
import { SCOPES } from '#shared/auth/scopes.ts';
import { errorBody, eventData, requestBodies, schemas, successBodies } from './components.ts';
import { versionedKey } from '#shared/cloud-api/route-kind.ts';

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

/** Tags in reading order: what a newcomer needs first, the plumbing last. */
const TAGS: [string, string][] = [
  ['messages', 'Send every kind of message, read and retry them'],
  ['media', 'Upload media once, send it many times by id'],
  ['conversations', 'Conversations, their messages and their AI settings'],
  ['agent', 'The AI agent of the whole business'],
  ['funnel', 'The sales funnel: stages and the stage of each contact'],
  ['contacts', 'Contacts, search and bulk operations'],
  ['segments', 'Static and dynamic segments of contacts'],
  ['team', 'The human agents of the team'],
  ['user-webhooks', 'Webhook subscriptions and their deliveries (see the events under Webhooks)'],
  ['broadcasts', 'Template broadcasts to a segment or a list of contacts'],
  ['cloud-api', "The WhatsApp Cloud API's own paths (/{version}/...): point a Cloud API client or SDK at this service's base URL with an API key as its access token"],
  ['upstream', 'Callbacks of the WhatsApp Cloud API (not for API clients)'],
  ['meta', 'This reference'],
];

const tagOf = (path: string) => {
  const first = path.split('/')[1] ?? '';
  if (first === 'webhooks') return 'upstream';
  if (first === '{version}') return 'cloud-api';
  return TAGS.some(([name]) => name === first) ? first : 'meta';
};

const jsonContent = (schema: unknown) => ({ content: { 'application/json': { schema } } });

const rateLimitHeaders = {
  'Retry-After': { description: 'seconds until the window resets (when a refused request may be made again)', schema: { type: 'integer' } },
  'X-RateLimit-Limit': { description: 'requests allowed per window for this key and class', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'requests left in the current window', schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'unix seconds when the window resets', schema: { type: 'integer' } },
};

/** The statuses every operation can answer, whatever its handler declares (the endpoint stack produces them). */
const standardErrors = (route: Route, key: string): Record<string, { description: string }> => {
  const out: Record<string, { description: string }> = {
    400: { description: 'Invalid request (validation_error, invalid_json, or the area\'s own error)' },
    404: { description: 'Not found' },
    500: { description: 'Internal error' },
    503: { description: 'service_unavailable: the table is throttling; retry after `Retry-After` seconds' },
    504: { description: 'timeout: the request ran out of time; what it began may still land, so read before repeating it' },
  };
  if (route.scope) {
    out[401] = { description: 'Missing, malformed, revoked or unknown API key' };
    out[403] = { description: `The key lacks the scope ${route.scope}, or the resource belongs to another account` };
    out[429] = { description: 'Rate limit exceeded (retry after `retry_after` seconds)' };
  }
  if (route.method !== 'GET' && route.method !== 'DELETE' && !key.includes('/webhooks/upstream')) out[413] ??= { description: 'Request body too large' };
  return out;
};

const errorResponse = (route: Route, key: string, code: number, description: string) => ({
  description,
  ...(code === 429 ? { headers: rateLimitHeaders } : {}),
  ...jsonContent(errorBody(key, code)),
});

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

/** The Cloud-API-compatible send routes (with and without the version). */
const COMPATIBLE_SENDS: ReadonlySet<string> = new Set(['POST /{version}/{id}/messages', 'POST /{id}/messages']);

export function buildOpenApi(specs: Map<string, HandlerSpec | undefined>, serverUrl?: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const spec = specs.get(route.handler);
    // A versionless Graph route is documented as its versioned twin.
    const key = versionedKey(`${route.method} ${route.path}`);
    const declared = Object.entries(spec?.responses ?? { 200: 'Success' });
    const successes = declared.filter(([code]) => Number(code) < 300);
    const responses: Record<string, unknown> = {};
    for (const [code, { description }] of Object.entries(standardErrors(route, key))) responses[code] = errorResponse(route, key, Number(code), description);
    for (const [code, description] of declared.filter(([c]) => Number(c) >= 300)) responses[code] = errorResponse(route, key, Number(code), description);
    for (const [code, description] of successes) {
      responses[code] = {
        description,
        ...(route.limit ? { headers: rateLimitHeaders } : {}),
        ...(key === 'GET /docs' ? { content: { 'text/html': { schema: { type: 'string' } } } } : key === 'GET /webhooks/upstream' ? { content: { 'text/plain': { schema: { type: 'string' } } } } : jsonContent(successBodies[key]?.[Number(code)] ?? { type: 'object' })),
      };
    }
    const operation: Record<string, unknown> = {
      operationId: `${route.method.toLowerCase()}${route.path.replace(/\{(\w+)\}/g, 'By-$1').split(/[^A-Za-z0-9]+/).map((p) => p && p[0].toUpperCase() + p.slice(1)).join('')}`,
      summary: spec?.summary ?? `${route.method} ${route.path}`,
      tags: [tagOf(route.path)],
      parameters: parametersOf(route, spec),
      responses,
      security: route.scope ? [{ apiKey: [route.scope] }] : [],
      'x-required-scope': route.scope,
      'x-rate-limit-class': route.limit,
    };
    if (spec?.description) operation.description = spec.description;
    if (spec?.body) {
      const contentType = spec.bodyKind === 'multipart' ? 'multipart/form-data' : 'application/json';
      const schema = schemaOf(spec.body);
      // A file part is binary in a form (the handler sees the parser's { content, filename, mimetype }).
      const properties = schema.properties as Record<string, unknown> | undefined;
      if (spec.bodyKind === 'multipart' && properties?.file) properties.file = { type: 'string', format: 'binary' };
      // A body the endpoint defaults when absent (v.optional, e.g. the conversation pause) is not required.
      operation.requestBody = { required: (spec.body as { type?: string }).type !== 'optional', content: { [contentType]: { schema } } };
    } else if (requestBodies[key] ?? (COMPATIBLE_SENDS.has(key) && requestBodies['POST /messages/v1'])) {
      // The compatible send route takes the body of POST /messages/v1 in upstream style only (`messaging_product`
      // required, as Meta requires it): its examples are those.
      const { schema, examples } = requestBodies[key] ?? requestBodies['POST /messages/v1'];
      const shown = COMPATIBLE_SENDS.has(key) && examples
        ? Object.fromEntries(Object.entries(examples).filter(([, example]) => 'messaging_product' in (example.value as object)))
        : examples;
      operation.requestBody = { required: true, content: { 'application/json': { schema, ...(shown ? { examples: shown } : {}) } } };
    }
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operation;
  }

  const webhooks: Record<string, unknown> = {};
  for (const name of [...EVENT_NAMES, TEST_EVENT]) {
    const who = name === TEST_EVENT
      ? 'Sent by `POST /user-webhooks/{id}/test` to that subscription only, also when it is disabled, and never retried (not an event to subscribe to).'
      : 'Sent to every enabled subscription whose `events` include this name or `*`. A delivery without a 2xx answer within 10 s is retried with exponential backoff.';
    webhooks[name] = {
      post: {
        summary: `Event ${name}`,
        description: `${who} Verify \`X-Webhook-Signature\` (hex HMAC-SHA256 of the exact body bytes, keyed with the subscription secret) in constant time before trusting the body.`,
        tags: ['events'],
        parameters: [
          { name: 'X-Webhook-Signature', in: 'header', required: true, schema: { type: 'string', pattern: '^[0-9a-f]{64}$' }, description: 'hex HMAC-SHA256 of the body, keyed with the subscription secret' },
          { name: 'X-Webhook-Event', in: 'header', required: true, schema: { type: 'string', const: name } },
          { name: 'X-Webhook-Timestamp', in: 'header', required: true, schema: { type: 'string', format: 'date-time' } },
          { name: 'X-Webhook-ID', in: 'header', required: true, schema: { type: 'string' }, description: 'unique id of the delivery (the same on retries)' },
          { name: 'webhook-id', in: 'header', required: true, schema: { type: 'string' }, description: 'Standard Webhooks id' },
          { name: 'webhook-timestamp', in: 'header', required: true, schema: { type: 'string' }, description: 'Standard Webhooks timestamp (unix seconds), to reject replays' },
          { name: 'webhook-signature', in: 'header', required: true, schema: { type: 'string' }, description: 'Standard Webhooks signature: v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">' },
        ],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: { type: 'object', required: ['event', 'data'], properties: { event: { const: name }, data: eventData[name] ?? { type: 'object' } } },
            },
          },
        },
        responses: { 200: { description: 'Any 2xx acknowledges the delivery; anything else (or no answer within 10 s) is retried' } },
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
    tags: [...TAGS.map(([name, description]) => ({ name, description })), { name: 'events', description: 'Outbound webhook events' }],
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
      schemas,
    },
  };
}

/** Loads every handler module's `spec` (used locally, in tests and at synth time). */
export async function loadSpecs(load: (handler: string) => Promise<{ spec?: HandlerSpec }>): Promise<Map<string, HandlerSpec | undefined>> {
  const specs = new Map<string, HandlerSpec | undefined>();
  // A module that does not load fails the document: one built without it would describe its routes wrongly.
  for (const handler of new Set(routes.map((r) => r.handler))) specs.set(handler, (await load(handler)).spec);
  return specs;
}
