/**
 * Request path: median and p99 latency of GET /funnel/v1/stages, POST /messages/v1 (text, sandbox upstream)
 * and GET /segments/{id} through the local HTTP server, beside the time of the DynamoDB (and upstream) calls
 * each request makes, counted and timed in the same process. Target: the service adds at most 30% over
 * the time of its own DynamoDB and upstream calls; an authenticated read makes at most 3 DynamoDB requests.
 */
import type { BenchFigure, BenchOptions } from './types.ts';

interface CallStats {
  calls: number;
  /** [start, end] of every DynamoDB and upstream call; parallel calls overlap, so their time is the union. */
  spans: [number, number][];
}

const unionMs = (spans: [number, number][]) => {
  let total = 0;
  let end = -Infinity;
  for (const [a, b] of [...spans].sort((x, y) => x[0] - y[0])) {
    if (b <= end) continue;
    total += b - Math.max(a, end);
    end = b;
  }
  return total;
}

export async function run({ quick, dynamodbEndpoint }: BenchOptions): Promise<BenchFigure[]> {
  process.env.LIMIT_REQUESTS_PER_MINUTE = '1000000';
  process.env.LIMIT_MESSAGES_PER_MINUTE = '1000000';
  const { startLocalStack } = await import('#infra/local/stack.ts');
  const stack = await startLocalStack({ port: 0, sandboxPort: 0, dynamodbEndpoint, demo: true, quiet: true });
  const { dynamo } = await import('#shared/store/client.ts');

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
  // Upstream time (the sandbox) is outside the service too: time global fetch calls to the sandbox.
  const realFetch = globalThis.fetch;
  globalThis.fetch = (async (input: any, init?: any) => {
    const url = String(input?.url ?? input);
    if (!current || !url.startsWith(stack.sandboxUrl)) return realFetch(input, init);
    const t = performance.now();
    const stats = current;
    try {
      return await realFetch(input, init);
    } finally {
      stats.spans.push([t, performance.now()]);
    }
  }) as typeof fetch;

  const key = stack.demo!.apiKey;
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await realFetch(`${stack.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const json = await res.json().catch(() => undefined);
    if (res.status >= 400) throw new Error(`${method} ${path} → ${res.status} ${JSON.stringify(json)}`);
    return json as any;
  };

  // Setup: a few stages, an inbound message (opens the 24-hour window), a dynamic segment.
  for (const name of ['Lead', 'Qualified', 'Won']) await call('POST', '/funnel/v1/stages', { name });
  await realFetch(`${stack.sandboxUrl}/__sandbox/inbound`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ from: '+15550001111', text: 'hi' }) });
  await stack.queues.idle();
  const segment = await call('POST', '/segments', { name: 'Bench', type: 'dynamic', rules: { version: 3, filters: { tags: { any: ['vip'] } } } });

  const n = quick ? 40 : 200;
  const cases: [string, () => Promise<unknown>][] = [
    ['GET /funnel/v1/stages', () => call('GET', '/funnel/v1/stages')],
    ['POST /messages/v1 (text)', () => call('POST', '/messages/v1', { to: '+15550001111', content: 'hello' })],
    ['GET /segments/{id}', () => call('GET', `/segments/${segment.data.id}`)],
  ];
  const figures: BenchFigure[] = [];
  for (const [name, fn] of cases) {
    for (let i = 0; i < 5; i++) await fn(); // warm-up
    const latencies: number[] = [];
    const storeTimes: number[] = [];
    const counts: number[] = [];
    for (let i = 0; i < n; i++) {
      current = { calls: 0, spans: [] };
      const t = performance.now();
      await fn();
      latencies.push(performance.now() - t);
      storeTimes.push(unionMs(current.spans));
      counts.push(current.calls);
      current = undefined;
    }
    const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
    const med = (xs: number[]) => sorted(xs)[Math.floor(xs.length / 2)];
    const p99 = (xs: number[]) => sorted(xs)[Math.min(xs.length - 1, Math.floor(xs.length * 0.99))];
    figures.push({
      name: `request path: ${name}`,
      value: med(latencies),
      unit: 'ms',
      baseline: med(storeTimes),
      baselineName: 'its DynamoDB + upstream calls',
      target: { maxRatio: 1.3 },
      note: `p99 ${p99(latencies).toFixed(1)} ms; DynamoDB requests per call: median ${med(counts)}, max ${Math.max(...counts)}`,
    });
    if (name.startsWith('GET /funnel')) {
      figures.push({ name: 'DynamoDB requests: authenticated read (stages)', value: med(counts), unit: 'x', baseline: 3, baselineName: 'auth + limit + read', target: { maxRatio: 1 } });
    }
  }
  globalThis.fetch = realFetch;
  await stack.stop();
  return figures;
}
