/**
 * Generated bad input for every route of the route table (fast-check, seeded, reproducible): wrong types,
 * missing and extra fields, huge strings and arrays, unicode, nulls, invalid UUIDs, bad JSON, wrong content
 * types. Every answer must be a client error in the contract's shape — never a 5xx, never a hang.
 * `npm test` runs RUNS_PER_ROUTE per route, each route from a seed of its own; `npm run test:stress` runs 1000.
 */
import fc from 'fast-check';
import { routes, type Route } from '#shared/routes.ts';
import { isCloudApiRoute } from '#shared/cloud-api/route-kind.ts';
import type { TestTenant } from '../../support/api.ts';

// The fuzzer must meet validation, not the rate limiter: its key gets room (set before config is first read).
process.env.LIMIT_REQUESTS_PER_MINUTE = '1000000';
process.env.LIMIT_MESSAGES_PER_MINUTE = '1000000';
process.env.LIMIT_BULK_PER_MINUTE = '1000000';
const { invoke, newTenant } = await import('../../support/api.ts');

const RUNS_PER_ROUTE = process.env.STRESS ? 1000 : 60;
const SEED = Number(process.env.FUZZ_SEED ?? 20261120);
/** Each route its own seed (SEED plus its place in the route table): the routes between them meet as many different bodies as requests. */
const seedOf = (route: Route) => SEED + routes.indexOf(route);

let tenant: TestTenant;
beforeAll(async () => {
  tenant = await newTenant();
});

const idLike = fc.oneof(
  fc.constant('00000000-0000-4000-8000-000000000000'),
  fc.uuid(),
  fc.string({ maxLength: 60 }),
  fc.constantFrom('null', 'undefined', '../../etc/passwd', '%00', '💥', 'a'.repeat(5000), ' ', '{id}', '1 OR 1=1'),
);

const hostileValue = fc.oneof(
  fc.anything({ maxDepth: 3, withNullPrototype: false }),
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc.constantFrom(null, true, -1, 0, 1e308, -0, '', ' ', '\u0000', '🙂'.repeat(2000), 'x'.repeat(100_000)),
  fc.array(fc.string(), { maxLength: 2000 }),
);

const hostileBody = fc.oneof(
  fc.dictionary(fc.string({ maxLength: 20 }), hostileValue, { maxKeys: 8 }),
  hostileValue,
  // Plausible field names with wrong values: reaches deeper validation.
  fc.record(
    {
      to: hostileValue, type: hostileValue, content: hostileValue, name: hostileValue, stage_id: hostileValue,
      stage_ids: hostileValue, operation: hostileValue, contacts: hostileValue, contact_ids: hostileValue, rules: hostileValue,
      action: hostileValue, contactIds: hostileValue, filters: hostileValue, url: hostileValue, events: hostileValue,
      duration: hostileValue, aiEnabled: hostileValue, template: hostileValue, text: hostileValue, color: hostileValue,
    },
    { requiredKeys: [] },
  ),
);

const rawBodies = fc.constantFrom('{', '{"a":', 'not json', '[1,2', '\u0000\u0001', '{"to":"+1"}}', 'null', '"string"', '<xml/>');

const request = (route: Route) =>
  fc.record({
    params: fc.record(Object.fromEntries([...route.path.matchAll(/\{(\w+)\}/g)].map((m) => [m[1], idLike]))),
    query: fc.dictionary(fc.constantFrom('limit', 'cursor', 'offset', 'filters', 'search', 'status', 'to', 'x'), fc.string({ maxLength: 300 }), { maxKeys: 4 }),
    body: hostileBody,
    raw: fc.option(rawBodies, { nil: undefined }),
    contentType: fc.constantFrom('application/json', 'text/plain', 'multipart/form-data; boundary=x', 'application/x-www-form-urlencoded', ''),
  });

/** The contract's `{ error: code, message }`, or on a Cloud API route the Graph API's `{ error: { message, code, ... } }`. */
const hasErrorShape = (route: Route, body: any) =>
  typeof body?.error === 'string' || (isCloudApiRoute(`${route.method} ${route.path}`) && typeof body?.error?.message === 'string' && typeof body?.error?.code === 'number');

let tried = 0;
let serverErrors = 0;

describe.each(routes.map((r) => [`${r.method} ${r.path}`, r] as const))('%s', (key, route) => {
  it(`answers ${RUNS_PER_ROUTE} malformed requests with client errors`, async () => {
    // The media upload parses multipart with busboy; 1 MB raw garbage is enough to prove it.
    await fc.assert(
      fc.asyncProperty(request(route), async (req) => {
        tried++;
        const res = await invoke(key, {
          apiKey: route.scope ? tenant.apiKey : undefined,
          params: req.params as Record<string, string>,
          query: req.query,
          headers: { 'content-type': req.contentType },
          rawBody: req.raw ?? JSON.stringify(req.body),
        });
        if (res.status >= 500) serverErrors++;
        expect(res.status).toBeLessThan(500);
        if (res.status >= 400 && res.status !== 413) expect(hasErrorShape(route, res.body)).toBe(true);
      }),
      { numRuns: RUNS_PER_ROUTE, seed: seedOf(route), endOnFailure: true },
    );
  }, 120_000);
});

const fillParams = (route: Route) =>
  Object.fromEntries([...route.path.matchAll(/\{(\w+)\}/g)].map((m) => [m[1], m[1] === 'version' ? 'v23.0' : '00000000-0000-4000-8000-000000000000']));

it('refuses JSON nested past 64 levels, numbers past 2^53 - 1 in size and numbers other than 0 under 1e-130, with 400 in its own error shape on every route that reads a body', async () => {
  // 10,000 levels overflowed the stack of JSON.stringify in the send's size check and the segment rules' bounds (a 500).
  const bodies = {
    '10,000 levels': `{"a":${'['.repeat(10_000)}${']'.repeat(10_000)}}`,
    '1e309 (Infinity once parsed)': '{"name":"x","custom_fields":{"k":1e309}}',
    '2^60': '{"name":"x","rules":{"v":-1152921504606846976}}',
    '1e-200 (smaller than the table holds)': '{"name":"x","custom_fields":{"k":1e-200}}',
  };
  const wrong: string[] = [];
  const checked = routes.filter((r) => ['POST', 'PATCH', 'PUT'].includes(r.method) && r.path !== '/webhooks/upstream');
  for (const route of checked) {
    for (const [what, rawBody] of Object.entries(bodies)) {
      const res = await invoke(`${route.method} ${route.path}`, { apiKey: tenant.apiKey, params: fillParams(route), headers: { 'content-type': 'application/json' }, rawBody });
      // In the route's own error shape: the segments' format error, Graph's error object on the Cloud API routes.
      const shaped = route.path.startsWith('/segments') ? res.body?.error === 'Datos inválidos' && Array.isArray(res.body.details) : hasErrorShape(route, res.body);
      if (res.status !== 400 || !shaped) wrong.push(`${route.method} ${route.path} with ${what}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
    }
  }
  expect(wrong).toEqual([]);
  expect(checked.length).toBeGreaterThan(30);
}, 60_000);

it('refuses a custom field number past 2^53 - 1 (it has lost digits already; the table stores numbers exactly) with 400, and takes 2^53 - 1', async () => {
  const contact = await invoke('POST /contacts/v1', { apiKey: tenant.apiKey, body: { phone_number: '+5215512349876' } });
  const big = { custom_fields: { k: 2 ** 60 } };
  const created = await invoke('POST /contacts/v1', { apiKey: tenant.apiKey, body: { phone_number: '+5215512349877', ...big } });
  const updated = await invoke('PATCH /contacts/v1/{id}', { apiKey: tenant.apiKey, params: { id: contact.body.contact.id }, body: big });
  const bulk = await invoke('POST /contacts/v1/bulk', { apiKey: tenant.apiKey, body: { operation: 'create', contacts: [{ phone_number: '+5215512349878', ...big }] } });
  expect([created.status, updated.status]).toEqual([400, 400]);
  expect(created.body).toMatchObject({ error: 'validation_error', message: 'Invalid body: Numbers may be at most 9007199254740991 in size' });
  expect(bulk.status).toBe(400);
  const safe = await invoke('PATCH /contacts/v1/{id}', { apiKey: tenant.apiKey, params: { id: contact.body.contact.id }, body: { custom_fields: { k: Number.MAX_SAFE_INTEGER } } });
  expect(safe.status).toBe(200);
  expect(safe.body.contact.custom_fields).toEqual({ k: Number.MAX_SAFE_INTEGER });
});

afterAll(() => {
  console.log(`hardening: bad input: ${tried} generated malformed requests over ${routes.length} routes (seeds ${SEED} + route index), ${serverErrors} 5xx`);
});
