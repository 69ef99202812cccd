/**
 * Webhook throughput: sustained deliveries per second from a published event to the receiver's 2xx,
 * through the whole pipeline (events queue → fan-out worker → webhook-deliveries queue → delivery worker
 * → signed POST through the SSRF-safe client), beside a bare loop that signs and POSTs the same payloads
 * to the same receiver with the same concurrency (messages in flight per queue).
 * Target: at least 0.8× the bare loop (issue 21).
 *
 * The receiver answers after RECEIVER_LATENCY_MS, as a receiver across the internet does (tens of ms);
 * the figure therefore shows what the pipeline's bookkeeping (DynamoDB Local reads and writes for the
 * outbox, the delivery record, the ordering lane and the lease) costs on top of the network wait.
 */
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { Agent, request } from 'undici';
import pLimit from 'p-limit';
import { execSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { BenchFigure, BenchOptions } from './types.ts';

const RECEIVER_LATENCY_MS = Number(process.env.BENCH_WEBHOOK_LATENCY_MS ?? 50);
/**
 * Messages in flight: the bare loop's requests, and the pipeline's per queue (4 worker invocations at once, as
 * LocalQueues counts them, each of a batch of up to 10).
 */
const CONCURRENCY = 40;
const BATCH_SIZE = 10;

/** CPU time of the DynamoDB Local JVM so far (trace mode: BENCH_TRACE=1). */
function javaCpuMs(): number {
  if (!process.env.BENCH_TRACE) return 0;
  try {
    // This module's own DynamoDB Local (run.ts starts one per module), by its port: others may be running.
    const port = new URL(process.env.DYNAMODB_ENDPOINT ?? '').port;
    const pid = execSync(`pgrep -f "DynamoDBLocal.jar.*-port ${port}"`).toString().trim().split('\n')[0];
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return 0;
  }
}

export async function run({ quick }: BenchOptions): Promise<BenchFigure[]> {
  process.env.WEBHOOK_RETRY_BASE_SECONDS = '0.05';
  const { LocalQueues } = await import('#infra/local/queues.ts');
  const { startQueueServices } = await import('#infra/local/aws/queue-services.ts');
  const queueServices = await startQueueServices();
  Object.assign(process.env, queueServices.environment);
  const { createBusiness } = await import('#shared/business/repository.ts');
  const { newEvent, outboxPut, publish } = await import('#shared/events/outbox.ts');
  const { db, dynamo } = await import('#shared/store/client.ts');
  // Counts the table requests the pipeline makes per delivery (the figure that decides its cost in AWS).
  let counting = false;
  let tableRequests = 0;
  const byCommand = new Map<string, number>();
  const timeByCommand = new Map<string, number>();
  dynamo.middlewareStack.add((next, context) => async (args) => {
    if (!counting) return next(args);
    tableRequests++;
    const name = context.commandName ?? 'unknown';
    byCommand.set(name, (byCommand.get(name) ?? 0) + 1);
    const t0 = performance.now();
    try {
      return await next(args);
    } finally {
      if (process.env.BENCH_TRACE) timeByCommand.set(name, (timeByCommand.get(name) ?? 0) + performance.now() - t0);
    }
  }, { step: 'initialize', name: 'webhookBenchCounter' });
  // Trace: the time of each command's HTTP exchange alone (below the SDK's own steps).
  const httpTime = new Map<string, number>();
  if (process.env.BENCH_TRACE) {
    dynamo.middlewareStack.add((next, context) => async (args) => {
      const t0 = performance.now();
      try {
        return await next(args);
      } finally {
        const name = context.commandName ?? 'unknown';
        if (counting) httpTime.set(name, (httpTime.get(name) ?? 0) + performance.now() - t0);
      }
    }, { step: 'deserialize', priority: 'low', name: 'webhookBenchHttpTimer' });
  }
  const { createSubscription } = await import('#shared/webhooks/service.ts');
  const { serializePayload, signedHeaders } = await import('#shared/webhooks/signing.ts');
  const { deliveryId } = await import('#shared/webhooks/fanout.ts');
  const { startReceiver } = await import('../integration/webhooks/receiver.ts');

  const receiver = await startReceiver(() => ({ status: 200, delayMs: RECEIVER_LATENCY_MS }));
  const concurrency = CONCURRENCY;
  const queues = new LocalQueues(queueServices, { retryDelayMs: 100, concurrency: concurrency / BATCH_SIZE }).start();

  // The quick run keeps the full run's round size: with 300 events a round lasted about half a second, so the
  // pipeline's ramp-up (the first fan-out before the first send) and its last, partial batches weighed on its figure.
  const n = 1000;
  const rounds = Number(process.env.BENCH_WEBHOOK_ROUNDS ?? (quick ? 2 : 3));
  // Uncounted rounds first: DynamoDB Local's JVM compiles its hot paths over the first few thousand
  // deliveries (BENCH_TRACE=1 shows its CPU per delivery falling from about 3.7 ms in the first round to
  // about 1.2 ms from the third on), a warm-up that DynamoDB in AWS does not have. Node's JIT and the
  // bare loop's connections warm up in the same rounds.
  const warmUp = Number(process.env.BENCH_WEBHOOK_WARMUP ?? (quick ? 2 : 3));
  const pipeline: number[] = [];
  const bare: number[] = [];
  try {
    for (let round = 1 - warmUp; round <= rounds; round++) {
      const record = round > 0;
      const business = await createBusiness(`Bench webhooks ${round}`);
      const sub = await createSubscription(business.businessId, { name: 'bench', url: receiver.url, events: ['*'] });
      // Events of many contacts (each its own ordering lane), committed beforehand: the clock runs from publish.
      const events = Array.from({ length: n }, (_, i) =>
        newEvent(business.businessId, 'contact.updated', { contact_id: `contact-${round}-${i}`, changed_fields: ['name'], updated_at: new Date().toISOString() }));
      const write = pLimit(16);
      await Promise.all(events.map((e) => write(() => db.send(new TransactWriteCommand({ TransactItems: [outboxPut(e)] })))));

      const before = receiver.received.length;
      counting = record;
      const javaBefore = javaCpuMs();
      const nodeBefore = process.cpuUsage();
      const eluBefore = performance.eventLoopUtilization();
      const { monitorEventLoopDelay } = await import('node:perf_hooks');
      const h = monitorEventLoopDelay({ resolution: 1 }); h.enable();
      let t = performance.now();
      await publish(events);
      // Trace: when the fan-out has taken the last event, and how many deliveries were done by then.
      let fanOutDone: { at: number; delivered: number } | undefined;
      const watch = process.env.BENCH_TRACE ? setInterval(() => {
        if (!fanOutDone && queueServices.sqs.messages('events').length === 0) fanOutDone = { at: performance.now(), delivered: receiver.received.length - before };
      }, 5) : undefined;
      await receiver.waitFor(before + n, 300_000);
      const end = performance.now();
      clearInterval(watch);
      if (record) pipeline.push(n / ((end - t) / 1000));
      if (process.env.BENCH_TRACE) {
        const cpu = process.cpuUsage(nodeBefore);
        const elu = performance.eventLoopUtilization(eluBefore);
        console.error(`DynamoDB Local CPU ${((javaCpuMs() - javaBefore) / n).toFixed(2)} ms per delivery, Node CPU ${((cpu.user + cpu.system) / 1000 / n).toFixed(2)} ms, ` +
          `event loop ${(elu.utilization * 100).toFixed(0)}% busy, delay p50 ${(h.percentile(50) / 1e6).toFixed(1)} p90 ${(h.percentile(90) / 1e6).toFixed(1)} p99 ${(h.percentile(99) / 1e6).toFixed(1)} max ${(h.max / 1e6).toFixed(1)} ms, wall ${((end - t) / n).toFixed(2)} ms per delivery`);
        if (fanOutDone) {
          console.error(`  while the fan-out had events to take (${(fanOutDone.at - t).toFixed(0)} ms): ${(fanOutDone.delivered / ((fanOutDone.at - t) / 1000)).toFixed(0)} deliveries/s; ` +
            `after it: ${((n - fanOutDone.delivered) / ((end - fanOutDone.at) / 1000)).toFixed(0)}/s`);
        }
      }
      await queues.idle(60_000);
      counting = false;

      // Baseline: the same bodies, signed the same way, POSTed with the same concurrency over a pooled agent.
      const agent = new Agent({ connections: concurrency });
      const limit = pLimit(concurrency);
      const before2 = receiver.received.length;
      t = performance.now();
      await Promise.all(events.map((e) => limit(async () => {
        const body = serializePayload(e.event, e.data);
        const headers = signedHeaders({ deliveryId: deliveryId(e.id, sub.id, e.createdAt), event: e.event, body, secret: sub.secret });
        const res = await request(receiver.url, { method: 'POST', headers, body, dispatcher: agent });
        await res.body.dump();
        if (res.statusCode >= 300) throw new Error(`baseline got ${res.statusCode}`);
      })));
      if (record) bare.push(n / ((performance.now() - t) / 1000));
      if (receiver.received.length - before2 !== n) throw new Error('baseline lost requests');
      await agent.close();
    }
  } finally {
    await queues.stop();
    await receiver.close();
    dynamo.middlewareStack.remove('webhookBenchCounter');
    dynamo.middlewareStack.remove('webhookBenchHttpTimer');
  }
  if (process.env.BENCH_TRACE) for (const [c, t] of timeByCommand) console.error(c, (t / byCommand.get(c)!).toFixed(1), 'ms avg', 'http', ((httpTime.get(c) ?? 0) / byCommand.get(c)!).toFixed(1));
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const spread = (xs: number[]) => Math.max(...xs) - Math.min(...xs);
  return [{
    name: `webhooks: deliveries/s, event to 2xx (${n} events, concurrency ${concurrency}, receiver ${RECEIVER_LATENCY_MS} ms)`,
    value: median(pipeline),
    spread: spread(pipeline),
    unit: 'ops/s',
    baseline: median(bare),
    baselineName: 'bare sign + POST loop, same concurrency',
    target: { minRatio: 0.8 },
    note: `pipeline runs: ${pipeline.map((x) => x.toFixed(0)).join(', ')} /s; bare loop: ${bare.map((x) => x.toFixed(0)).join(', ')} /s; ` +
      `${(tableRequests / (n * rounds)).toFixed(1)} DynamoDB requests per delivery (` +
      [...byCommand].sort((a, b) => b[1] - a[1]).map(([c, k]) => `${c.replace(/Command$/, '')} ${(k / (n * rounds)).toFixed(2)}`).join(', ') + ')',
  }];
}
