/**
 * Hostile input at every depth of every route (fast-check, seeded, reproducible). Each route has valid seed
 * requests (test/integration/security/hostile-seeds.ts); the test changes them where a client can:
 * - names of Object.prototype members (`__proto__`, `constructor`, `toString`, `hasOwnProperty`, `valueOf`...)
 *   added as keys to every object, put in place of keys and as the values of fields (field names included);
 * - oversized values (a 100 KB+ string, an array of 5,000 items, an object of 5,000 keys, 3,000 levels of
 *   nesting) in place of any value of any free-form object, body or query.
 * Every change is made once at every place (the sweep), then fast-check mixes several at random places.
 * Every answer must be below 500 in the contract's shape; a refused request sends nothing upstream and an
 * oversized one sends nothing at all (counted at the upstream sandbox, which accepts the seeds themselves).
 * `npm test` runs the sweep in short and RUNS_PER_ROUTE random cases per route; `npm run test:stress` the whole sweep and 500.
 */
import fc from 'fast-check';
import { routes, type Route } from '#shared/routes.ts';
import { isCloudApiRoute } from '#shared/cloud-api/route-kind.ts';
import type { TestTenant } from '../../support/api.ts';
import { TEST_UPSTREAM } from '../../support/upstream-secret.ts';
import { seedsFor, type Seed } from './hostile-seeds.ts';

// The fuzzer must meet validation, not the rate limiter (set before config is first read).
process.env.LIMIT_REQUESTS_PER_MINUTE = '1000000';
process.env.LIMIT_MESSAGES_PER_MINUTE = '1000000';
process.env.LIMIT_BULK_PER_MINUTE = '1000000';
process.env.UPSTREAM_RETRY_BASE_MS = '5';
const { startSandbox } = await import('#infra/local/sandbox/server.ts');
const sandbox = await startSandbox({ port: 0, serviceWebhookUrl: 'http://127.0.0.1:9/unused', appSecret: TEST_UPSTREAM.appSecret, accessToken: TEST_UPSTREAM.token });
process.env.UPSTREAM_BASE_URL = sandbox.url;
const { invoke, newTenant } = await import('../../support/api.ts');

const RUNS_PER_ROUTE = process.env.STRESS ? 500 : 10;

const SEED = Number(process.env.FUZZ_SEED ?? 20261125);
/** Every own member name of Object.prototype, and `prototype`. */
const PROTO_NAMES = [...Object.getOwnPropertyNames(Object.prototype), 'prototype'];
const SWEEP_TURNS = process.env.STRESS ? PROTO_NAMES.length : 3;

const OVERSIZED: Record<string, () => unknown> = {
  'a 100 KB string': () => 'x'.repeat(100_001),
  'a 100 KB string of emoji': () => '🙂'.repeat(25_001),
  'an array of 5,000 strings': () => Array.from({ length: 5_000 }, (_, i) => `v${i}`),
  'an object of 5,000 keys': () => Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`k${i}`, i])),
  '3,000 levels of objects': () => nest(3_000, (inner) => ({ a: inner })),
  '3,000 levels of arrays': () => nest(3_000, (inner) => [inner]),
};

function nest(depth: number, wrap: (inner: unknown) => unknown): unknown {
  let value: unknown = 'bottom';
  for (let i = 0; i < depth; i++) value = wrap(value);
  return value;
}

type Path = (string | number)[];
type Mutation =
  | { kind: 'add-key'; at: Path; name: string; value: unknown }
  | { kind: 'rename-key'; at: Path; name: string }
  | { kind: 'name-as-value'; at: Path; name: string }
  | { kind: 'oversized'; at: Path; what: string };

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);
/** A key set as the client's JSON would set it: an own property, even for `__proto__`. */
const define = (o: Record<string, unknown>, key: string, value: unknown) =>
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });

/** Every place in a value: the path of each node, containers and leaves, the root included. */
function placesOf(value: unknown, at: Path = []): { at: Path; isObject: boolean; isKey: boolean }[] {
  const here = { at, isObject: isObject(value), isKey: typeof at[at.length - 1] === 'string' };
  if (Array.isArray(value)) return [here, ...value.flatMap((v, i) => placesOf(v, [...at, i]))];
  if (isObject(value)) return [here, ...Object.entries(value).flatMap(([k, v]) => placesOf(v, [...at, k]))];
  return [here];
}

function apply(seed: unknown, mutations: Mutation[]): unknown {
  const root = { value: structuredClone(seed) } as Record<string, unknown>;
  for (const m of mutations) {
    const path: Path = ['value', ...m.at];
    const parent = path.slice(0, -1).reduce<any>((node, k) => node?.[k], root);
    const last = path[path.length - 1]!;
    if (parent === undefined || parent === null || typeof parent !== 'object') continue;
    const node = parent[last];
    if (m.kind === 'add-key' && isObject(node)) define(node, m.name, m.value);
    else if (m.kind === 'rename-key' && isObject(parent) && typeof last === 'string') {
      const v = parent[last];
      delete parent[last];
      define(parent, m.name, v);
    } else if (m.kind === 'name-as-value') define(parent, last as string, m.name);
    else if (m.kind === 'oversized') define(parent, last as string, OVERSIZED[m.what]!());
  }
  return root.value;
}

const describeMutations = (ms: Mutation[]) =>
  ms.map((m) => `${m.kind} ${'name' in m ? m.name : m.what} at ${JSON.stringify(m.at)}`).join('; ');

/** A seed's request as the client sends it: the query's `filters` as JSON, like `GET /contacts/v1?filters=`. */
const toRequest = (route: Route, seed: Seed, body: unknown, query: unknown) => ({
  params: Object.fromEntries([...route.path.matchAll(/\{(\w+)\}/g)].map((m) => [m[1]!, seed.params?.[m[1]!] ?? crypto.randomUUID()])),
  query: isObject(query) ? Object.fromEntries(Object.entries(query).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)])) : undefined,
  rawBody: body === undefined ? undefined : JSON.stringify(body),
});

let tenant: TestTenant;
const tried = { sweep: 0, random: 0 };
const serverErrors: string[] = [];
const OVERSIZED_PAYLOAD = 20_000;

/** A business whose seeds' recipient wrote in a minute ago: a free-form seed message is accepted upstream. */
async function seededTenant(): Promise<TestTenant> {
  const t = await newTenant();
  sandbox.state.lastInbound.set(sandbox.state.windowKey(t.phoneNumberId, '5215512345678'), Date.now());
  return t;
}

beforeAll(async () => {
  tenant = await seededTenant();
});
afterAll(async () => {
  console.log(`hardening: hostile input: ${tried.sweep} swept + ${tried.random} random requests over ${routes.length} routes (seed ${SEED}): prototype member names as keys and values, oversized values at every depth; ${serverErrors.length} 5xx`);
  await sandbox.close();
});

const sentUpstream = () => sandbox.state.sent.length;

/** Sends one mutated seed; answers what went wrong (nothing when all is well). */
async function probe(route: Route, seed: Seed, mutations: Mutation[], target: 'body' | 'query'): Promise<string | undefined> {
  const key = `${route.method} ${route.path}`;
  const body = target === 'body' ? apply(seed.body, mutations) : seed.body;
  const query = target === 'query' ? apply(seed.query ?? {}, mutations) : seed.query;
  const before = sentUpstream();
  const res = await invoke(key, { apiKey: route.scope ? tenant.apiKey : undefined, ...toRequest(route, seed, body, query) });
  const sent = sentUpstream() - before;
  // An oversized value went out when a payload the upstream accepted is that big (real ones are a few KB).
  const oversizedSent = sandbox.state.sent.slice(before).some((m) => JSON.stringify(m.payload).length > OVERSIZED_PAYLOAD);
  const what = `${key} ${target} ${describeMutations(mutations)}`;
  if (res.status >= 500) {
    serverErrors.push(what);
    return `${what}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`;
  }
  // The contract's `{ error: code, message }`, or on a Cloud API route the Graph API's `{ error: { message, code, ... } }`.
  const graph = isCloudApiRoute(`${route.method} ${route.path}`) && typeof res.body?.error?.code === 'number';
  if (res.status >= 400 && res.status !== 413 && typeof res.body?.error !== 'string' && !graph) return `${what}: ${res.status} without an error code`;
  if (res.status >= 300 && sent > 0) return `${what}: refused with ${res.status} yet ${sent} message(s) went upstream`;
  if (oversizedSent) return `${what}: an oversized value was sent upstream (${res.status})`;
  return undefined;
}

/**
 * The sweep. Every prototype member name as a key of every object at once (one request), and as the value of
 * every field at once, the names taken in turn from field to field and shifted by one per request (all of them
 * at every field under STRESS, SWEEP_TURNS otherwise); then each place changed alone: its key renamed to a name,
 * and its value replaced by an oversized one (the kinds taken in turn, all of them under STRESS).
 */
const mutationsAt = (value: unknown, target: 'body' | 'query'): Mutation[][] => {
  const all = placesOf(value);
  const places = all.filter((p) => target === 'body' || p.at.length > 0);
  const leaves = places.filter((p) => p.at.length > 0 && !p.isObject);
  const kinds = Object.keys(OVERSIZED);
  const name = (i: number) => PROTO_NAMES[i % PROTO_NAMES.length]!;
  const sweep: Mutation[][] = [all.filter((p) => p.isObject).flatMap((p) => PROTO_NAMES.map((n): Mutation => ({ kind: 'add-key', at: p.at, name: n, value: n })))];
  if (leaves.length > 0) for (let turn = 0; turn < SWEEP_TURNS; turn++) sweep.push(leaves.map((p, i) => ({ kind: 'name-as-value', at: p.at, name: name(i + turn) })));
  places.forEach((p, i) => {
    if (p.isKey) sweep.push([{ kind: 'rename-key', at: p.at, name: name(i) }]);
    for (const what of process.env.STRESS ? kinds : [kinds[i % kinds.length]!]) sweep.push([{ kind: 'oversized', at: p.at, what }]);
  });
  return sweep;
};

const mutationArb = (value: unknown, target: 'body' | 'query'): fc.Arbitrary<Mutation[]> => {
  const places = placesOf(value);
  // A query is always a map of strings: its root is changed by adding keys only.
  const replaceable = places.filter((p) => target === 'body' || p.at.length > 0).map((p) => p.at);
  const at = fc.constantFrom(...(replaceable.length > 0 ? replaceable : [['_absent']]));
  const objectAt = fc.constantFrom(...places.filter((p) => p.isObject).map((p) => p.at).concat([[]]));
  const keyAt = places.some((p) => p.isKey) ? fc.constantFrom(...places.filter((p) => p.isKey).map((p) => p.at)) : objectAt;
  const name = fc.constantFrom(...PROTO_NAMES);
  const hostileValue = fc.oneof(name, fc.constantFrom(...Object.keys(OVERSIZED)).map((what) => OVERSIZED[what]!()), fc.anything({ maxDepth: 2 }));
  // A value can be replaced by a name only below the root; a seed that is an empty object has no such place (a
  // filter over the root alone would never produce a value, and fast-check would spin on it).
  const belowRoot = replaceable.filter((p) => p.length > 0);
  const one: fc.Arbitrary<Mutation> = fc.oneof(
    fc.record({ kind: fc.constant('add-key' as const), at: objectAt, name, value: hostileValue }),
    fc.record({ kind: fc.constant('rename-key' as const), at: keyAt, name }),
    ...(belowRoot.length > 0 ? [fc.record({ kind: fc.constant('name-as-value' as const), at: fc.constantFrom(...belowRoot), name })] : []),
    fc.record({ kind: fc.constant('oversized' as const), at, what: fc.constantFrom(...Object.keys(OVERSIZED)) }),
  );
  return fc.array(one, { minLength: 1, maxLength: 3 });
};

describe.each(routes.map((r) => [`${r.method} ${r.path}`, r] as const))('%s', (key, route) => {
  const seeds = seedsFor(key);

  it('answers every prototype member name and every oversized value, at every place, below 500 and without sending it', async () => {
    const failures: string[] = [];
    for (const seed of seeds) {
      for (const target of ['body', 'query'] as const) {
        const value = target === 'body' ? seed.body : seed.query;
        if (value === undefined || (target === 'body' && ['GET', 'DELETE'].includes(route.method))) continue;
        for (const mutations of mutationsAt(value, target)) {
          tried.sweep++;
          const failure = await probe(route, seed, mutations, target);
          if (failure) failures.push(failure);
        }
      }
    }
    expect(failures).toEqual([]);
  }, 300_000);

  it(`answers ${RUNS_PER_ROUTE} random mixes of them below 500 and without sending them`, async () => {
    const target = ['GET', 'DELETE'].includes(route.method) ? 'query' : 'body';
    const seedArb = fc.constantFrom(...seeds);
    // Failures are collected as one-line descriptions, not thrown inside the property: fast-check would otherwise
    // print the counterexample, and printing 100 KB strings and 3,000-deep objects takes longer than the test.
    const failures: string[] = [];
    await fc.assert(
      fc.asyncProperty(seedArb.chain((seed) => mutationArb(target === 'body' ? seed.body ?? {} : seed.query ?? {}, target).map((ms) => [seed, ms] as const)), async ([seed, ms]) => {
        tried.random++;
        const failure = await probe(route, seed.body === undefined && target === 'body' ? { ...seed, body: {} } : seed, ms, target);
        if (failure) failures.push(failure);
      }),
      { numRuns: RUNS_PER_ROUTE, seed: SEED },
    );
    expect(failures).toEqual([]);
  }, 300_000);
});

it('refuses every JSON object body sent as an array of it with 400: an array is no object, though valibot\'s object schemas would take it', async () => {
  const fresh = await seededTenant();
  const wrong: string[] = [];
  let tried = 0;
  // (The upstream receiver checks Meta's signature first; a segment's routes look the made-up segment up first: 404.)
  for (const route of routes.filter((r) => r.path !== '/webhooks/upstream')) {
    const key = `${route.method} ${route.path}`;
    for (const seed of seedsFor(key).filter((s) => !s.notValid && typeof s.body === 'object' && s.body !== null && !Array.isArray(s.body) && !(s.body instanceof FormData))) {
      tried++;
      const res = await invoke(key, { apiKey: route.scope ? fresh.apiKey : undefined, ...toRequest(route, seed, [seed.body], seed.query) });
      const expected = route.path.startsWith('/segments/{id}') ? 404 : 400;
      if (res.status !== expected) wrong.push(`${key}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
    }
  }
  expect(wrong).toEqual([]);
  expect(tried).toBeGreaterThan(30);
}, 120_000);

it('has valid seeds: each one sent as it is gets a 2xx (or the 404 of a made-up id), and the message seeds reach the upstream', async () => {
  // A business of its own: the fuzzing above created the seeds' contacts, tags and stages in the shared one.
  const fresh = await seededTenant();
  const wrong: string[] = [];
  const before = sentUpstream();
  for (const route of routes) {
    const key = `${route.method} ${route.path}`;
    for (const seed of seedsFor(key).filter((s) => !s.notValid)) {
      const res = await invoke(key, { apiKey: route.scope ? fresh.apiKey : undefined, ...toRequest(route, seed, seed.body, seed.query) });
      const expected = seed.expect ?? (route.path.includes('{') ? [404] : [200, 201, 202, 207]);
      if (!expected.includes(res.status)) wrong.push(`${key} ${JSON.stringify(seed).slice(0, 200)}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
    }
  }
  expect(wrong).toEqual([]);
  expect(sentUpstream() - before).toBeGreaterThanOrEqual(seedsFor('POST /messages/v1').length);
}, 120_000);
