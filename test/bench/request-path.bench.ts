/**
 * Request path, two measures:
 * - Latency: median and p99 of GET /funnel/v1/stages, POST /messages/v1 (text, sandbox upstream) and
 *   GET /segments/{id} through the local HTTP server, beside the time of the DynamoDB (and upstream) calls each
 *   request makes. Target: the service adds at most 30% over the time of its own calls.
 * - Cost: each request's OWN DynamoDB calls, counted at the table client inside an AsyncLocalStorage context
 *   around the handler invocation (queue workers run outside it and are reported apart, per request), against a
 *   stated maximum of requests and of sequential round trips (before the upstream call, for sends and retries).
 */
import type { BenchFigure, BenchOptions } from './types.ts';

interface CallStats {
  calls: number;
  /** [start, end] of every DynamoDB and upstream call; parallel calls overlap, so their time is the union. */
  spans: [number, number][];
}

/** The stated maxima (issue 21): a text to a known contact and conversation, and a retry, at most 7 requests and 3 round trips before the upstream. */
const MAXIMA: Record<string, { requests: number; rounds: number; roundsBefore?: 'upstream' }> = {
  'POST /messages/v1 (text, known contact)': { requests: 7, rounds: 3, roundsBefore: 'upstream' },
  'POST /messages/v1/{id}/retry': { requests: 7, rounds: 3, roundsBefore: 'upstream' },
  // auth, rate limit and the segment, then at once its count (the 16 counter partitions) and its page (a first page
  // of each of the 16 shards; a deep page takes more rounds). Before the counters: 19, the 16 shards read whole.
  'GET /segments/{id}': { requests: 35, rounds: 4 },
  // auth, rate limit, the contact, then its versioned write with the event.
  'PATCH /contacts/v1/{id}': { requests: 4, rounds: 4 },
};

const unionMs = (spans: [number, number][]) => {
  let total = 0;
  let end = -Infinity;
  for (const [a, b] of [...spans].sort((x, y) => x[0] - y[0])) {
    if (b <= end) continue;
    total += b - Math.max(a, end);
    end = b;
  }
  return total;
};

export async function run({ quick, dynamodbEndpoint }: BenchOptions): Promise<BenchFigure[]> {
  process.env.LIMIT_REQUESTS_PER_MINUTE = '1000000';
  process.env.LIMIT_MESSAGES_PER_MINUTE = '1000000';
  const { startLocalStack } = await import('#infra/local/stack.ts');
  const stack = await startLocalStack({ port: 0, sandboxPort: 0, dynamodbEndpoint, demo: true, quiet: true });
  const { dynamo } = await import('#shared/store/client.ts');
  const counting = await import('../support/dynamo-calls.ts');
  const { invoke } = await import('../support/api.ts');
  // Queue workers receive from the SQS stand-in in their own poll loop, outside any request's context: their
  // calls count as background, not as the request's.
  counting.countCalls(dynamo);

  let current: CallStats | undefined;
  dynamo.middlewareStack.add(
    (next) => async (args) => {
      const t = performance.now();
      try {
        return await next(args);
      } finally {
        if (current) {
          current.calls++;
          current.spans.push([t, performance.now()]);
        }
      }
    },
    { step: 'initialize', name: 'benchTimer' },
  );
  // Upstream time (the sandbox) is outside the service too: time the requests to the sandbox, and mark the start of a
  // send's upstream call for the round-trip count.
  const { observeHttpRequests } = await import('../support/outbound-http.ts');
  const stopObserving = observeHttpRequests((url) => {
    if (!url.startsWith(stack.sandboxUrl)) return;
    if (url.endsWith('/messages')) counting.mark('upstream');
    const stats = current;
    if (!stats) return;
    const t = performance.now();
    return () => stats.spans.push([t, performance.now()]);
  });

  const key = stack.demo!.apiKey;
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${stack.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const json = await res.json().catch(() => undefined);
    if (res.status >= 400) throw new Error(`${method} ${path} → ${res.status} ${JSON.stringify(json)}`);
    return json as any;
  };
  const sandbox = (path: string, body: unknown) =>
    fetch(`${stack.sandboxUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  // Setup: a few stages, an inbound message (opens the 24-hour window), a dynamic segment, a contact.
  const customer = '+15550001111';
  for (const name of ['Lead', 'Qualified', 'Won']) await call('POST', '/funnel/v1/stages', { name });
  await sandbox('/__sandbox/inbound', { from: customer, text: 'hi' });
  await stack.queues.idle();
  const segment = await call('POST', '/segments', { name: 'Bench', type: 'dynamic', rules: { version: 3, filters: { tags: { any: ['vip'] } } } });
  const contact = (await call('POST', '/contacts/v1', { phone_number: '+15550002222', name: 'Bench' })).contact;

  const n = quick ? 40 : 200;
  const figures: BenchFigure[] = [];
  const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
  const med = (xs: number[]) => sorted(xs)[Math.floor(xs.length / 2)];
  const p99 = (xs: number[]) => sorted(xs)[Math.min(xs.length - 1, Math.floor(xs.length * 0.99))];

  // ---- Latency beside the request's own calls (through the HTTP server) ----
  const timed: [string, () => Promise<unknown>][] = [
    ['GET /funnel/v1/stages', () => call('GET', '/funnel/v1/stages')],
    ['POST /messages/v1 (text)', () => call('POST', '/messages/v1', { to: customer, content: 'hello' })],
    ['GET /segments/{id}', () => call('GET', `/segments/${segment.data.id}`)],
  ];
  for (const [name, fn] of timed) {
    for (let i = 0; i < 5; i++) await fn(); // warm-up
    const latencies: number[] = [];
    const storeTimes: number[] = [];
    for (let i = 0; i < n; i++) {
      current = { calls: 0, spans: [] };
      const t = performance.now();
      await fn();
      latencies.push(performance.now() - t);
      storeTimes.push(unionMs(current.spans));
      current = undefined;
    }
    await stack.queues.idle();
    figures.push({
      name: `request path: ${name}`,
      value: med(latencies),
      unit: 'ms',
      baseline: med(storeTimes),
      baselineName: 'its DynamoDB + upstream calls',
      target: { maxRatio: 1.3 },
      note: `p99 ${p99(latencies).toFixed(1)} ms`,
    });
  }

  // ---- Cost: each request's own DynamoDB calls (handlers invoked in a measured context) ----
  const costRuns = quick ? 10 : 30;
  // Retries need failed messages: texts to a number with no open window fail (131047); its window then opens.
  const late = '+15550003333';
  const failedIds: string[] = [];
  for (let i = 0; i < costRuns + 1; i++) {
    const res = await invoke('POST /messages/v1', { apiKey: key, body: { to: late, content: `retry ${i}` } });
    if (res.status !== 400) throw new Error(`expected a failed send, got ${res.status} ${JSON.stringify(res.body)}`);
    failedIds.push(res.body.data.id);
  }
  await sandbox('/__sandbox/window', { to: late, open: true });
  await stack.queues.idle();

  const costed: [string, (i: number) => Promise<{ status: number }>][] = [
    ['POST /messages/v1 (text, known contact)', () => invoke('POST /messages/v1', { apiKey: key, body: { to: customer, content: 'hello' } })],
    ['POST /messages/v1/{id}/retry', (i) => invoke('POST /messages/v1/{id}/retry', { apiKey: key, params: { id: failedIds[i] } })],
    ['GET /segments/{id}', () => invoke('GET /segments/{id}', { apiKey: key, params: { id: segment.data.id } })],
    ['PATCH /contacts/v1/{id}', (i) => invoke('PATCH /contacts/v1/{id}', { apiKey: key, params: { id: contact.id }, body: { name: `Bench ${i}` } })],
  ];
  for (const [name, fn] of costed) {
    const max = MAXIMA[name];
    await fn(costRuns); // warm-up (the retry's spare failed message)
    await stack.queues.idle();
    const requests: number[] = [];
    const rounds: number[] = [];
    const backgroundBefore = counting.background.length;
    for (let i = 0; i < costRuns; i++) {
      const { result, calls, marks } = await counting.measure(() => fn(i));
      if (result.status >= 400) throw new Error(`${name} → ${result.status}`);
      if (max.roundsBefore && marks.upstream === undefined) throw new Error(`${name} made no upstream call`);
      requests.push(calls.length);
      rounds.push(counting.sequentialRounds(calls, max.roundsBefore ? marks.upstream : Infinity));
    }
    await stack.queues.idle();
    const workerCalls = (counting.background.length - backgroundBefore) / costRuns;
    const where = max.roundsBefore ? ' before the upstream call' : '';
    figures.push({
      name: `DynamoDB requests: ${name}`,
      value: Math.max(...requests),
      unit: 'x',
      baseline: max.requests,
      baselineName: 'stated maximum',
      target: { maxRatio: 1 },
      note: `median ${med(requests)}; queue workers meanwhile: ${workerCalls.toFixed(1)} per request (not the request's own)`,
    });
    figures.push({
      name: `DynamoDB round trips in sequence${where}: ${name}`,
      value: Math.max(...rounds),
      unit: 'x',
      baseline: max.rounds,
      baselineName: 'stated maximum',
      target: { maxRatio: 1 },
    });
  }
  stopObserving();
  await stack.stop();
  return figures;
}
