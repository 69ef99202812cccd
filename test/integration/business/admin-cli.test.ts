/**
 * The admin CLI as an operator runs it (a child process against the run's DynamoDB Local and Secrets Manager
 * stand-in): set-messaging takes a business's own access token from standard input or a file and stores it as that
 * business's secret, never from argv and never printed; a taken phone number is refused with the way out;
 * move-number hands a number over and says from whom.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';

interface Run { status: number | null; out: any; stdout: string; stderr: string }

function admin(args: string[], stdin?: string, env: NodeJS.ProcessEnv = process.env): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'infra/local/admin.ts', ...args], { env: { ...env, NODE_OPTIONS: '' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr, out: JSON.parse(stdout.trim().split('\n').pop() || 'null') }));
    child.stdin.end(stdin ?? '');
  });
}

const sm = new SecretsManagerClient({});
const storedToken = async (businessId: string) =>
  JSON.parse((await sm.send(new GetSecretValueCommand({ SecretId: `${process.env.BUSINESS_TOKEN_SECRET_PREFIX}${businessId}` }))).SecretString!).token;
const newToken = () => `EAAG${randomUUID().replace(/-/g, '')}`;
const numberId = () => `1${String(Math.floor(Math.random() * 1e14)).padStart(14, '0')}`;

it('set-messaging stores the token from stdin, then a rotated one from a file, never printing it; --token is refused', async () => {
  // Prepare
  const { out: business } = await admin(['create-business', '--name', 'Tokens']);
  const [first, second] = [newToken(), newToken()];
  const dir = await mkdtemp(join(tmpdir(), 'token-'));
  await writeFile(join(dir, 'token'), `${second}\n`);
  const number = numberId();
  const base = ['set-messaging', '--business', business.businessId, '--phone-number-id', number, '--waba-id', 'waba_t'];

  // Act
  const fromStdin = await admin([...base, '--token-stdin'], `${first}\n`);
  const afterStdin = await storedToken(business.businessId);
  const fromFile = await admin([...base, '--token-file', join(dir, 'token')]);
  const onArgv = await admin([...base, '--token', newToken()]);

  // Assess
  expect(fromStdin.status).toBe(0);
  expect(fromStdin.out).toEqual({ businessId: business.businessId, phoneNumberId: number, wabaId: 'waba_t', accessToken: 'own' });
  expect(afterStdin).toBe(first);
  expect(fromFile.status).toBe(0);
  expect(await storedToken(business.businessId)).toBe(second);
  for (const run of [fromStdin, fromFile]) expect(run.stdout + run.stderr).not.toMatch(/EAAG/);
  expect(onArgv.status).toBe(1);
  expect(onArgv.out.error).toMatch(/--token-stdin.*--token-file/);
  expect(await storedToken(business.businessId)).toBe(second);
}, 120_000);

it('without AWS credentials it reaches the local stack on the ports npm start listens on', async () => {
  // Prepare: an operator's shell after `npm start`: no credentials, no endpoints, at most the stack's port variables
  const { AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_PROFILE, DYNAMODB_ENDPOINT, AWS_ENDPOINT_URL_SECRETS_MANAGER, ...shell } = process.env;
  const operator = {
    ...shell,
    DYNAMODB_PORT: new URL(DYNAMODB_ENDPOINT!).port,
    SECRETS_MANAGER_PORT: new URL(AWS_ENDPOINT_URL_SECRETS_MANAGER!).port,
  };
  const token = newToken();

  // Act
  const { out: business } = await admin(['create-business', '--name', 'Operator'], undefined, operator);
  const set = await admin(['set-messaging', '--business', business.businessId, '--phone-number-id', numberId(), '--waba-id', 'waba_o', '--token-stdin'], `${token}\n`, operator);

  // Assess
  expect(set.status).toBe(0);
  expect(set.out.accessToken).toBe('own');
  expect(await storedToken(business.businessId)).toBe(token);
}, 120_000);

it("given a deployed stack's TABLE_NAME, it reaches AWS with the SDK's usual credentials, a profile file's too", async () => {
  // Prepare: an operator's shell with the default profile in a credentials file (no keys or AWS_PROFILE exported), the
  // table named as the README says; the AWS services at the SDK's standard endpoint variables stand for AWS here
  const { AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_PROFILE, DYNAMODB_ENDPOINT, AWS_ENDPOINT_URL_SECRETS_MANAGER, ...shell } = process.env;
  const dir = await mkdtemp(join(tmpdir(), 'aws-'));
  await writeFile(join(dir, 'credentials'), `[default]\naws_access_key_id = ${AWS_ACCESS_KEY_ID}\naws_secret_access_key = ${AWS_SECRET_ACCESS_KEY}\n`);
  const operator = {
    ...shell,
    AWS_SHARED_CREDENTIALS_FILE: join(dir, 'credentials'),
    AWS_CONFIG_FILE: join(dir, 'config'),
    AWS_ENDPOINT_URL_DYNAMODB: DYNAMODB_ENDPOINT,
    AWS_ENDPOINT_URL_SECRETS_MANAGER,
  };

  // Act
  const created = await admin(['create-business', '--name', 'Deployed'], undefined, operator);

  // Assess: written to the named table (read back through the test's own client)
  expect(created.status).toBe(0);
  const { GetCommand } = await import('@aws-sdk/lib-dynamodb');
  const { db, table } = await import('#shared/store/client.ts');
  const { keys } = await import('#shared/store/keys.ts');
  expect((await db.send(new GetCommand({ TableName: table(), Key: keys.business(created.out.businessId) }))).Item).toMatchObject({ name: 'Deployed' });
}, 120_000);

it('refuses a taken number with the way out, and move-number hands it over', async () => {
  // Prepare
  const [{ out: a }, { out: b }] = await Promise.all([admin(['create-business', '--name', 'A']), admin(['create-business', '--name', 'B'])]);

  // Act
  const taken = await admin(['set-messaging', '--business', b.businessId, '--phone-number-id', a.phoneNumberId, '--waba-id', 'waba_b']);
  const moved = await admin(['move-number', '--business', b.businessId, '--phone-number-id', a.phoneNumberId, '--waba-id', 'waba_b']);

  // Assess
  expect(taken.status).toBe(1);
  expect(taken.out.error).toMatch(new RegExp(`${a.phoneNumberId} belongs to business ${a.businessId}.*move-number`));
  expect(moved.status).toBe(0);
  expect(moved.out).toEqual({ phoneNumberId: a.phoneNumberId, from: a.businessId, to: b.businessId, wabaId: 'waba_b' });
  // A flag the CLI does not know is its one-line JSON error, not a stack trace.
  const unknown = await admin(['move-number', '--phone-number-id', a.phoneNumberId, '--to', b.businessId]);
  expect(unknown.status).toBe(1);
  expect(unknown.out.error).toMatch(/--to/);
  expect(unknown.stderr).toBe('');
}, 120_000);

it('rekey-contacts gives contacts written before the newest-first shard order their new key, once', async () => {
  // Prepare: two contacts as written before 2026-11-26 (the shard sort key was the id alone)
  const { PutCommand, GetCommand } = await import('@aws-sdk/lib-dynamodb');
  const { db, table } = await import('#shared/store/client.ts');
  const { keys } = await import('#shared/store/keys.ts');
  const { contact, contactItem } = await import('../segments/seed.ts');
  const { out: business } = await admin(['create-business', '--name', 'Rekey']);
  const written = [contact({ created_at: '2026-01-02T03:04:05.000Z' }), contact()];
  for (const c of written) await db.send(new PutCommand({ TableName: table(), Item: { ...contactItem(business.businessId, c), ssk: c.id } }));

  // Act
  const first = await admin(['rekey-contacts', '--business', business.businessId]);
  const again = await admin(['rekey-contacts', '--business', business.businessId]);

  // Assess
  expect(first.out).toEqual({ businessId: business.businessId, rekeyed: 2 });
  expect(again.out).toEqual({ businessId: business.businessId, rekeyed: 0 });
  for (const c of written) {
    const { Item } = await db.send(new GetCommand({ TableName: table(), Key: keys.contact(business.businessId, c.id) }));
    expect(Item!.ssk).toBe(contactItem(business.businessId, c).ssk);
    expect(keys.contactShardId(Item!.ssk)).toBe(c.id);
  }
}, 120_000);
