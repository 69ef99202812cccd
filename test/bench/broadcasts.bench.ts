/**
 * Broadcast pacing: a broadcast to N contacts against the sandbox, with the messages limit raised, and the
 * achieved rate measured from the recipients' `sent_at` beside the configured pace (target ≥ 0.9x), plus the
 * most messages in any sliding 60-second window beside the pace (target ≤ 1x).
 *
 * The run happens in a child process: the pace and limits are read from the environment once per process, and
 * the harness's process may already have loaded them for another benchmark.
 */
import { spawn } from 'node:child_process';
import { freePort } from '#infra/local/free-port.ts';
import { fileURLToPath } from 'node:url';
import type { BenchFigure, BenchOptions } from './types.ts';

/**
 * The pace is what the local stack (DynamoDB Local, the sandbox and every worker in one Node process) sustains on
 * two cores with room to spare; above about 30 messages a second the machine, not the pacing, sets the rate.
 */
const FULL = { recipients: 10_000, pacePerMinute: 1800 };
const QUICK = { recipients: 200, pacePerMinute: 600 };

interface ChildResult {
  recipients: number;
  sent: number;
  pacePerMinute: number;
  firstMs: number;
  lastMs: number;
  maxPerMinuteWindow: number;
  setupMs: number;
}

export async function run(options: BenchOptions): Promise<BenchFigure[]> {
  const size = options.quick ? QUICK : FULL;
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--child'], {
      env: {
        ...process.env,
        NODE_OPTIONS: '',
        DYNAMODB_ENDPOINT: options.dynamodbEndpoint,
        LIMIT_MESSAGES_PER_MINUTE: String(size.pacePerMinute),
        BROADCAST_PACE_PER_MINUTE: String(size.pacePerMinute),
        LIMIT_REQUESTS_PER_MINUTE: '1000000',
        BENCH_RECIPIENTS: String(size.recipients),
        LOG_LEVEL: 'SILENT',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`broadcast bench child exited with ${code}`))));
  });
  const r = JSON.parse(out.trim().split('\n').at(-1)!) as ChildResult;
  const seconds = (r.lastMs - r.firstMs) / 1000;
  // n messages spread over n-1 intervals.
  const achieved = seconds > 0 ? (r.sent - 1) / seconds : 0;
  const pace = r.pacePerMinute / 60;
  return [
    {
      name: `broadcasts: ${r.recipients} recipients, achieved rate`,
      value: Math.round(achieved * 100) / 100,
      unit: 'ops/s',
      baseline: pace,
      baselineName: 'configured pace',
      target: { minRatio: 0.9 },
      note: `${r.sent}/${r.recipients} sent in ${seconds.toFixed(1)} s at a pace of ${r.pacePerMinute}/min (setup ${Math.round(r.setupMs / 1000)} s)`,
    },
    {
      name: `broadcasts: ${r.recipients} recipients, most in any 60 s window`,
      value: r.maxPerMinuteWindow,
      unit: 'x',
      baseline: r.pacePerMinute,
      baselineName: 'messages per minute limit',
      target: { maxRatio: 1 },
      note: seconds < 60 ? 'the run is shorter than a minute: the window holds the whole run' : undefined,
    },
  ];
}

/** Most timestamps in any window [t, t + 60 s). */
const maxInWindow = (times: number[], windowMs: number) => {
  let best = 0;
  for (let i = 0, j = 0; j < times.length; j++) {
    while (times[j] - times[i] >= windowMs) i++;
    best = Math.max(best, j - i + 1);
  }
  return best;
};


async function child(): Promise<void> {
  const t0 = Date.now();
  const recipients = Number(process.env.BENCH_RECIPIENTS);
  const sandboxPort = await freePort();
  process.env.UPSTREAM_BASE_URL = `http://127.0.0.1:${sandboxPort}`;
  const { startLocalStack } = await import('../../infra/local/stack.ts');
  const stack = await startLocalStack({ port: 0, sandboxPort, dynamodbEndpoint: process.env.DYNAMODB_ENDPOINT, demo: true, quiet: true });
  const { contact, seedContacts } = await import('../e2e/broadcasts/seed.ts');
  const { broadcastSettings } = await import('#shared/broadcasts/settings.ts');
  const { apiKey, businessId } = stack.demo!;
  const contacts = await seedContacts(businessId, Array.from({ length: recipients }, (_, i) => contact({ name: `Bench ${i}` })));
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${stack.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return (await res.json()) as any;
  };
  const setupMs = Date.now() - t0;
  const created = await call('POST', '/broadcasts/v1', {
    name: 'bench', templateName: 'order_update', template_parameters: ['{{contact.name}}', 'A-1'], contact_ids: contacts.map((c) => c.id),
  });
  const id = created.data.id as string;
  for (;;) {
    const b = (await call('GET', `/broadcasts/v1/${id}`)).data;
    if (b.status !== 'running' && b.status !== 'scheduled') break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  const times: number[] = [];
  let cursor: string | null = null;
  do {
    const page: any = await call('GET', `/broadcasts/v1/${id}/recipients?limit=500${cursor ? `&cursor=${cursor}` : ''}`);
    for (const r of page.data) if (r.sent_at) times.push(Date.parse(r.sent_at));
    cursor = page.next_cursor;
  } while (cursor);
  times.sort((a, b) => a - b);
  const result: ChildResult = {
    recipients,
    sent: times.length,
    pacePerMinute: broadcastSettings.pacePerMinute,
    firstMs: times[0] ?? 0,
    lastMs: times.at(-1) ?? 0,
    maxPerMinuteWindow: maxInWindow(times, 60_000),
    setupMs,
  };
  await stack.stop();
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
}

if (process.argv.includes('--child')) await child();
