/**
 * `npm start` as a script drives it (decisions.md, "Local runtime"): two stacks side by side told only PORT,
 * SANDBOX_PORT, DYNAMODB_PORT and S3_PORT; the printed lines a client parses; the admin CLI told only the stack's
 * DYNAMODB_ENDPOINT (its token goes to that stack's Secrets Manager) and answering JSON when the table is not there;
 * UPSTREAM_APP_SECRET used by the sandbox and the service; and the whole stack stopping when the npm process alone is
 * sent SIGTERM or SIGINT (a harness that kills the child it started), nothing left listening.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { standInPort } from '#infra/local/ports.ts';
import { LOCAL_BUSINESS_TOKEN_SECRET_PREFIX } from '#infra/local/sandbox/credentials.ts';

interface Started {
  child: ChildProcess;
  ports: number[];
  printed: Record<string, string>;
  baseUrl: string;
  sandboxUrl: string;
  apiKey: string;
  businessId: string;
  wabaId: string;
}

const isFree = (port: number) => new Promise<boolean>((resolve) => {
  const srv = createServer();
  srv.once('error', () => resolve(false));
  srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
});

/**
 * A free port below the system's ephemeral range (32768 and up on Linux): one the kernel hands to no other listener
 * or connection of the test run once the stack has let it go, so "taken after the stop" means the stack's.
 */
async function freeFixedPort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 11_000);
    if (await isFree(port)) return port;
  }
}

/** Four free ports, and a DynamoDB port whose stand-ins' default ports (DYNAMODB_PORT + 1324 to 1326) are free as well. */
async function freeStackPorts(): Promise<{ env: Record<string, string>; all: number[] }> {
  for (;;) {
    const [port, sandbox, dynamo, s3] = [await freeFixedPort(), await freeFixedPort(), await freeFixedPort(), await freeFixedPort()];
    const standIns = (['sqs', 'secretsManager', 'scheduler'] as const).map((s) => standInPort(dynamo, s));
    const all = [port, sandbox, dynamo, s3, ...standIns];
    if (new Set(all).size === all.length && standIns.every((p) => p > 0) && (await Promise.all(standIns.map(isFree))).every(Boolean)) {
      return { env: { PORT: String(port), SANDBOX_PORT: String(sandbox), DYNAMODB_PORT: String(dynamo), S3_PORT: String(s3) }, all };
    }
  }
}

/** `npm start` with only the decisions' four port variables (and `extra`), until it has printed its lines. */
async function npmStart(extra: Record<string, string> = {}): Promise<Started> {
  const { env, all } = await freeStackPorts();
  // A new user's shell: none of this test run's settings (its table, queues, endpoints).
  const shell = { PATH: process.env.PATH!, HOME: process.env.HOME ?? '/tmp', ...(process.env.JAVA_HOME ? { JAVA_HOME: process.env.JAVA_HOME } : {}) };
  // A process group of its own: whatever this test leaves running is stopped with the group at the end.
  const child = spawn('npm', ['start'], { env: { ...shell, ...env, ...extra }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const deadline = Date.now() + 90_000;
  while (!/^TABLE_NAME=.*$/m.test(out)) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`npm start did not come up:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  await new Promise((r) => setTimeout(r, 200)); // the rest of the block
  const printed = Object.fromEntries([...out.matchAll(/^([A-Z_]+)=(\S+)$/gm)].map((m) => [m[1], m[2]]));
  const line = (label: string) => new RegExp(`^\\s*${label}:\\s+(\\S+)`, 'm').exec(out)?.[1] ?? '';
  const wabaId = /WABA id (\S+?)\)/.exec(out)?.[1] ?? '';
  return { child, ports: all, printed, baseUrl: line('Base URL'), sandboxUrl: line('Sandbox'), apiKey: line('API key'), businessId: line('Business id'), wabaId };
}

/** Sends `signal` to the npm process only, and waits until every port of its stack is free again. */
/** Signals the npm process alone; answers the stack's ports still taken 20 s later (none, when it stopped). */
async function stop(s: Started, signal: NodeJS.Signals): Promise<number[]> {
  s.child.kill(signal);
  const deadline = Date.now() + 20_000;
  let taken: number[] = [];
  while (Date.now() < deadline) {
    const free = await Promise.all(s.ports.map(isFree));
    taken = s.ports.filter((_, i) => !free[i]);
    if (taken.length === 0) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  return taken;
}

function admin(args: string[], env: Record<string, string>, stdin = ''): Promise<{ status: number | null; stdout: string }> {
  // An operator's shell: no AWS credentials and no endpoints but those given.
  const shell = { PATH: process.env.PATH!, HOME: process.env.HOME ?? '/tmp' };
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'infra/local/admin.ts', ...args], { env: { ...shell, ...env } });
    let stdout = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.on('close', (status) => resolve({ status, stdout }));
    child.stdin.end(stdin);
  });
}

let a: Started | undefined;
let b: Started | undefined;
beforeAll(async () => {
  [a, b] = await Promise.all([npmStart({ UPSTREAM_APP_SECRET: 'a-secret-of-the-operators-own' }), npmStart()]);
}, 120_000);
afterAll(() => {
  for (const s of [a, b]) {
    try {
      process.kill(-s!.child.pid!, 'SIGKILL');
    } catch {
      // The group is gone: the stack stopped.
    }
  }
});

describe('npm start, as a script meets it', () => {
  it('runs two stacks side by side on the four port variables alone, each printing its lines and answering with its own key', async () => {
    for (const s of [a!, b!]) {
      expect(s.baseUrl).toBe(`http://127.0.0.1:${s.ports[0]}`);
      expect(s.sandboxUrl).toBe(`http://127.0.0.1:${s.ports[1]}`);
      expect(s.apiKey).toMatch(/^wak_[A-Za-z0-9]{40}$/);
      expect(s.printed.DYNAMODB_ENDPOINT).toBe(`http://127.0.0.1:${s.ports[2]}`);
      expect((await fetch(`${s.baseUrl}/team/v1`, { headers: { authorization: `Bearer ${s.apiKey}` } })).status).toBe(200);
      // The demo business's WABA id, printed for the Cloud API's template list.
      expect((await fetch(`${s.baseUrl}/v23.0/${s.wabaId}/message_templates`, { headers: { authorization: `Bearer ${s.apiKey}` } })).status).toBe(200);
    }
    expect((await fetch(`${a!.baseUrl}/team/v1`, { headers: { authorization: `Bearer ${b!.apiKey}` } })).status).toBe(401);
  });

  it("takes the admin CLI to the stack whose DYNAMODB_ENDPOINT it is given, Secrets Manager included, and answers JSON when there is no table", async () => {
    const token = `EAAG${randomUUID().replace(/-/g, '')}`;
    const set = await admin(['set-messaging', '--business', b!.businessId, '--phone-number-id', `1${Date.now()}`, '--waba-id', 'w', '--token-stdin'], { DYNAMODB_ENDPOINT: b!.printed.DYNAMODB_ENDPOINT }, `${token}\n`);
    const missing = await admin(['create-business', '--name', 'x'], { DYNAMODB_ENDPOINT: b!.printed.DYNAMODB_ENDPOINT, TABLE_NAME: 'no-such-table' });

    expect({ status: set.status, stdout: set.stdout }).toEqual({ status: 0, stdout: expect.any(String) });
    expect(JSON.parse(set.stdout)).toMatchObject({ businessId: b!.businessId, accessToken: 'own' });
    const sm = new SecretsManagerClient({ endpoint: b!.printed.AWS_ENDPOINT_URL_SECRETS_MANAGER, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    const stored = await sm.send(new GetSecretValueCommand({ SecretId: `${LOCAL_BUSINESS_TOKEN_SECRET_PREFIX}${b!.businessId}` })).catch(() => undefined);
    expect(stored ? JSON.parse(stored.SecretString!).token : 'not in this stack').toBe(token);
    expect(missing.status).toBe(1);
    expect(missing.stdout.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(missing.stdout)).toMatchObject({ error: expect.any(String), message: expect.any(String) });
  });

  it('signs and checks upstream webhooks with UPSTREAM_APP_SECRET when npm start was given one', async () => {
    const body = JSON.stringify({ object: 'whatsapp_business_account', entry: [] });
    const post = (secret: string) => fetch(`${a!.baseUrl}/webhooks/upstream`, {
      method: 'POST', body, headers: { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}` },
    });
    const inbound = await fetch(`${a!.sandboxUrl}/__sandbox/inbound`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ from: '+5215511112222', text: 'hola' }) });

    expect((await post('a-secret-of-the-operators-own')).status).toBe(200);
    expect((await post('sandbox-app-secret')).status).toBe(401);
    expect(((await inbound.json()) as { webhook_status: number }).webhook_status).toBe(200);
  });

  it('stops the whole stack when the npm process alone gets SIGTERM or SIGINT, leaving no port taken', async () => {
    const [afterTerm, afterInt] = await Promise.all([stop(a!, 'SIGTERM'), stop(b!, 'SIGINT')]);
    expect({ afterTerm, afterInt }).toEqual({ afterTerm: [], afterInt: [] });
  }, 60_000);
});
