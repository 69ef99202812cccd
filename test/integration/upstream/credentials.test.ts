/**
 * The stack's upstream credentials come from its Secrets Manager secret (UPSTREAM_SECRET_ARN), read through the SDK
 * at the run's stand-in: the verification handshake and the webhook signature use them, a rotated secret is picked
 * up by the first request it would fail, a multibyte verify token is a 403 (never a 500), and a placeholder app
 * secret refuses every webhook with a logged configuration error and a metric.
 *
 * Each test uses a secret of its own (never the run's shared one), named through UPSTREAM_SECRET_ARN.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { PutSecretValueCommand, CreateSecretCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { TEST_UPSTREAM } from '../../support/upstream-secret.ts';

// Logs and metrics on (before any service module loads), into the arrays `captured` reads.
process.env.LOG_LEVEL = 'DEBUG';
process.env.POWERTOOLS_METRICS_DISABLED = 'false';
const { logger } = await import('#shared/log/logger.ts');
const { metrics } = await import('#shared/metrics/metrics.ts');
const { invoke } = await import('../../support/api.ts');
const logLines: any[] = [];
const metricLines: any[] = [];
const sink = (into: any[]) => (line: string) => into.push(JSON.parse(line));
(logger as any).console = { error: sink(logLines), warn: sink(logLines), info: sink(logLines), debug: sink(logLines), log: sink(logLines) };
(metrics as any).console = { log: sink(metricLines), warn: () => undefined, error: () => undefined, info: () => undefined, debug: () => undefined };

const sm = new SecretsManagerClient({});
const runSecret = process.env.UPSTREAM_SECRET_ARN!;
afterAll(() => {
  process.env.UPSTREAM_SECRET_ARN = runSecret;
});

/** A new secret with these credentials, named in UPSTREAM_SECRET_ARN for what follows; answers its ARN. */
async function useSecret(credentials: { token: string; appSecret: string; verifyToken: string }): Promise<string> {
  const { ARN } = await sm.send(new CreateSecretCommand({ Name: `test/upstream-${randomUUID()}`, SecretString: JSON.stringify(credentials) }));
  process.env.UPSTREAM_SECRET_ARN = ARN!;
  return ARN!;
}

const handshake = (token: string) =>
  invoke('GET /webhooks/upstream', { query: { 'hub.mode': 'subscribe', 'hub.verify_token': token, 'hub.challenge': '42' } });

const sign = (body: string, secret: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
const webhook = (secret: string) => {
  const body = JSON.stringify({ object: 'whatsapp_business_account', entry: [] });
  return invoke('POST /webhooks/upstream', { rawBody: body, headers: { 'x-hub-signature-256': sign(body, secret) } });
};

/** Every log line and metric record printed while `work` runs. */
async function captured(work: () => Promise<unknown>): Promise<{ logs: any[]; metricLines: any[] }> {
  const [logsFrom, metricsFrom] = [logLines.length, metricLines.length];
  await work();
  return { logs: logLines.slice(logsFrom), metricLines: metricLines.slice(metricsFrom) };
}

describe('the stack secret', () => {
  it('answers the handshake and checks signatures with the values of the secret the ARN names', async () => {
    // Prepare
    const own = { token: 'tok-' + randomUUID(), appSecret: 'app-secret-' + randomUUID(), verifyToken: 'verify-' + randomUUID() };
    await useSecret(own);
    // Act
    const right = await handshake(own.verifyToken);
    const runValue = await handshake(TEST_UPSTREAM.verifyToken);
    const signed = await webhook(own.appSecret);
    const otherSecret = await webhook(TEST_UPSTREAM.appSecret);
    // Assess
    expect(right.status).toBe(200);
    expect(right.body).toBe(42);
    expect(runValue.status).toBe(403);
    expect(signed.status).toBe(200);
    expect(otherSecret.status).toBe(401);
  });

  it('answers 403, never 500, for a verify token of the right length in characters but not in bytes', async () => {
    // Prepare: 16 ASCII characters expected; the guesses have 16 characters and more bytes, or are empty.
    await useSecret({ token: 't'.repeat(20), appSecret: 'a'.repeat(32), verifyToken: 'abcdefghijklmnop' });
    // Act
    const answers = await Promise.all(['ñbcdefghijklmnop', '🙂'.repeat(8), 'é'.repeat(16), '', 'abcdefghijklmno'].map(handshake));
    // Assess
    expect(answers.map((a) => a.status)).toEqual([403, 403, 403, 403, 403]);
    expect(answers[0].body).toEqual({ error: 'forbidden', message: expect.any(String) });
  });

  it('picks up a rotated secret at the first request that would fail with the old one', async () => {
    // Prepare: the container has read the first values.
    const first = { token: 't'.repeat(20), appSecret: 'first-app-secret-' + randomUUID(), verifyToken: 'first-verify' };
    const arn = await useSecret(first);
    expect((await handshake(first.verifyToken)).status).toBe(200);
    // Act: rotate, then the upstream uses the new values.
    const second = { token: 'u'.repeat(20), appSecret: 'second-app-secret-' + randomUUID(), verifyToken: 'second-verify' };
    await sm.send(new PutSecretValueCommand({ SecretId: arn, SecretString: JSON.stringify(second) }));
    const signed = await webhook(second.appSecret);
    const verified = await handshake(second.verifyToken);
    // Assess
    expect(signed.status).toBe(200);
    expect(verified.status).toBe(200);
  });

  it.each([
    ['set-me', 'set-me'],
  ])('refuses every webhook while the app secret is a placeholder (%s): 401, a logged configuration error, a metric', async (_label, appSecret) => {
    // Prepare
    await useSecret({ token: 't'.repeat(20), appSecret, verifyToken: 'verify-' + randomUUID() });
    // Act: a body signed correctly with the placeholder itself.
    let res: Awaited<ReturnType<typeof webhook>> | undefined;
    const { logs, metricLines } = await captured(async () => {
      res = await webhook(appSecret);
    });
    // Assess
    expect(res!.status).toBe(401);
    expect(logs).toContainEqual(expect.objectContaining({ level: 'ERROR', error: expect.objectContaining({ name: 'ConfigurationError', message: expect.stringContaining('UPSTREAM_SECRET_ARN') }) }));
    expect(metricLines).toContainEqual(expect.objectContaining({ UpstreamAppSecretPlaceholder: 1 }));
    expect(JSON.stringify(logs)).not.toContain(`"${appSecret}"`);
  });

  it('takes a short app secret as any other: the operator chose it (locally UPSTREAM_APP_SECRET may be any value)', async () => {
    await useSecret({ token: 't'.repeat(20), appSecret: 'test-secret', verifyToken: 'verify-' + randomUUID() });
    expect((await webhook('test-secret')).status).toBe(200);
    expect((await webhook('sandbox-app-secret')).status).toBe(401);
  });

  it('fails loudly (500, the variable named in the log) when UPSTREAM_SECRET_ARN is not set', async () => {
    // Prepare
    delete process.env.UPSTREAM_SECRET_ARN;
    // Act
    let res: Awaited<ReturnType<typeof handshake>> | undefined;
    const { logs } = await captured(async () => {
      res = await handshake('anything');
    });
    // Assess
    expect(res!.status).toBe(500);
    expect(JSON.stringify(logs)).toContain('UPSTREAM_SECRET_ARN');
  });
});
