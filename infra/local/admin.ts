/**
 * The admin CLI: `npm run --silent admin -- <command> [--flag value]...`, one JSON object on stdout.
 * It reaches the table named by TABLE_NAME at DYNAMODB_ENDPOINT (the local stack prints it), or, given a TABLE_NAME
 * (or credentials in the shell) and no endpoint, a deployed stack's table with the SDK's usual credentials (the shell's
 * keys, a profile, SSO, a role). Businesses' own access tokens go to Secrets Manager
 * under BUSINESS_TOKEN_SECRET_PREFIX (the deployed stack's output; locally the stand-in `npm start` runs).
 *
 * A token is read from standard input (`--token-stdin`) or a file (`--token-file`), never from the command line,
 * so that it stays out of shell history and process listings; it is never printed.
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';

// Whatever goes wrong (the table unreachable, an unknown table) is still one JSON object on stdout, and exit code 1.
process.on('uncaughtException', (err) => {
  process.stdout.write(`${JSON.stringify({ error: (err as Error)?.name ?? 'Error', message: (err as Error)?.message ?? String(err) })}\n`);
  process.exit(1);
});

/** The port of a URL, or undefined when it is not one. */
const portOf = (url: string): number | undefined => {
  try {
    const u = new URL(url);
    return Number(u.port || (u.protocol === 'https:' ? 443 : 80));
  } catch {
    return undefined;
  }
};

// Told of no deployed table (a TABLE_NAME, or credentials in the shell) and no local endpoint, the CLI talks to the local
// stack on the ports `npm start` listens on (the same variables): its DynamoDB and its Secrets Manager stand-in, which
// accept any credentials. A deployed table is reached with whatever credentials the SDK finds (default profile, SSO, a role).
const deployed = !process.env.DYNAMODB_ENDPOINT && !process.env.DYNAMODB_PORT && Boolean(process.env.TABLE_NAME || process.env.AWS_ACCESS_KEY_ID || process.env.AWS_PROFILE);
if (!deployed) {
  const { LOCAL_BUSINESS_TOKEN_SECRET_PREFIX } = await import('./sandbox/credentials.ts');
  const { localPorts, standInPort } = await import('./ports.ts');
  const { dynamodbPort, secretsManagerPort } = localPorts();
  // Told only a stack's DynamoDB endpoint (the line `npm start` prints), the CLI finds that stack's Secrets Manager beside it.
  const givenDynamoPort = process.env.DYNAMODB_ENDPOINT ? portOf(process.env.DYNAMODB_ENDPOINT) : undefined;
  const secretsPort = givenDynamoPort !== undefined && !process.env.SECRETS_MANAGER_PORT ? standInPort(givenDynamoPort, 'secretsManager') : secretsManagerPort;
  process.env.DYNAMODB_ENDPOINT ??= `http://127.0.0.1:${dynamodbPort}`;
  process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER ??= `http://127.0.0.1:${secretsPort}`;
  process.env.BUSINESS_TOKEN_SECRET_PREFIX ??= LOCAL_BUSINESS_TOKEN_SECRET_PREFIX;
  Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local', AWS_REGION: process.env.AWS_REGION ?? 'us-east-1' });
}
// A local DynamoDB holds the local stack's table unless told otherwise; a deployed table must be named (TABLE_NAME).
if (process.env.DYNAMODB_ENDPOINT) process.env.TABLE_NAME ??= 'wa-crm';

const fail = (message: string): never => {
  process.stdout.write(`${JSON.stringify({ error: message })}\n`);
  process.exit(1);
};

const USAGE = {
  'create-business': '--name N  → { businessId, phoneNumberId }',
  'create-key': '--business ID [--scopes a,b | --scopes all]  (default all) → { keyId, apiKey, scopes }',
  'revoke-key': '--key-id ID  → { keyId, revoked }',
  'add-agent': '--business ID --email E [--name N] [--role agent|admin|super_admin] [--available true|false]  → { agentId }',
  'set-messaging': '--business ID --phone-number-id P --waba-id W [--token-stdin | --token-file F]  → { businessId, phoneNumberId, wabaId, accessToken }',
  'move-number': '--business ID --phone-number-id P --waba-id W  → { phoneNumberId, from, to, wabaId }',
  'rekey-contacts': '--business ID  → { businessId, rekeyed }',
} as const;

const [command, ...rest] = process.argv.slice(2);
// Usage, on stdout as the CLI's one JSON object: `admin -- --help`, `admin -- help`, `admin -- <command> --help`.
if (command === undefined || command === '--help' || command === '-h' || command === 'help' || rest.includes('--help') || rest.includes('-h')) {
  const asked = command && command in USAGE ? { [command]: USAGE[command as keyof typeof USAGE] } : USAGE;
  process.stdout.write(`${JSON.stringify({ usage: 'npm run --silent admin -- <command> [--flag value]...', commands: asked })}\n`);
  process.exit(0);
}
const options = {
  name: { type: 'string' },
  business: { type: 'string' },
  scopes: { type: 'string' },
  'key-id': { type: 'string' },
  email: { type: 'string' },
  role: { type: 'string' },
  available: { type: 'string' },
  'phone-number-id': { type: 'string' },
  'waba-id': { type: 'string' },
  'token-stdin': { type: 'boolean' },
  'token-file': { type: 'string' },
  // Accepted only to refuse it with the reason (argv is visible to every process and kept in shell history).
  token: { type: 'string' },
} as const;

/** The flags; an unknown or malformed one is the CLI's one-line error too, not a stack trace. */
function flags() {
  try {
    return parseArgs({ args: rest, options, strict: true }).values;
  } catch (err) {
    return fail((err as Error).message);
  }
}
const values = flags();
const need = (flag: keyof typeof values): string => (values[flag] as string | undefined) ?? fail(`--${flag} is required`);

const { createBusiness, getBusiness, moveNumber, PhoneNumberTakenError, setMessagingAccount } = await import('#shared/business/repository.ts');
const { createApiKey, revokeApiKey } = await import('#shared/auth/api-keys.ts');
const { SCOPES, isScope } = await import('#shared/auth/scopes.ts');
const { addAgent } = await import('#shared/team/repository.ts');

const requireBusiness = async (id: string) => (await getBusiness(id)) ?? fail(`business ${id} not found`);

/** The business's own access token, when one is given (stdin or file); trailing newlines are not part of it. */
async function givenToken(): Promise<string | undefined> {
  if (values.token !== undefined) fail('--token is refused: give the access token on standard input (--token-stdin) or in a file (--token-file)');
  if (values['token-stdin'] && values['token-file']) fail('give --token-stdin or --token-file, not both');
  if (values['token-file']) return (await readFile(values['token-file'], 'utf8').catch(() => fail(`cannot read --token-file ${values['token-file']}`))).trim();
  if (!values['token-stdin']) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').trim();
}

/** The repository's refusals, as the CLI's one-line errors. */
async function orFail<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    if (err instanceof PhoneNumberTakenError || (err as Error).name === 'InvalidAccessTokenError') return fail((err as Error).message);
    throw err;
  }
}

let out: unknown;
switch (command) {
  case 'create-business': {
    const b = await createBusiness(need('name'));
    out = { businessId: b.businessId, phoneNumberId: b.phoneNumberId };
    break;
  }
  case 'create-key': {
    const businessId = need('business');
    await requireBusiness(businessId);
    // decisions.md's `create-key --business ID [--scopes a,b | --scopes all]`: without --scopes, every scope (as the demo key).
    const raw = values.scopes ?? 'all';
    const scopes = raw === 'all' ? [...SCOPES] : raw.split(',').map((s) => s.trim()).filter(Boolean);
    const unknown = scopes.filter((s) => !isScope(s));
    if (unknown.length) fail(`unknown scopes: ${unknown.join(', ')}; known: ${SCOPES.join(', ')}`);
    out = await createApiKey(businessId, scopes as any);
    break;
  }
  case 'revoke-key': {
    const keyId = need('key-id');
    if (!(await revokeApiKey(keyId))) fail(`key ${keyId} not found`);
    out = { keyId, revoked: true };
    break;
  }
  case 'add-agent': {
    const businessId = need('business');
    await requireBusiness(businessId);
    const role = values.role ?? 'agent';
    if (!['agent', 'admin', 'super_admin'].includes(role)) fail('--role must be agent, admin or super_admin');
    if (values.available !== undefined && !['true', 'false'].includes(values.available)) fail('--available must be true or false');
    const agent = await addAgent(businessId, { email: need('email'), name: values.name, role: role as any, available: values.available !== 'false' });
    out = { agentId: agent.id };
    break;
  }
  case 'set-messaging': {
    const businessId = need('business');
    await requireBusiness(businessId);
    const token = await givenToken();
    // The token first: a number routed to a business that cannot yet authenticate would fail its sends.
    if (token !== undefined) {
      // Loaded only here: the Secrets Manager client is the CLI's slowest import.
      const { storeBusinessToken } = await import('#shared/secrets/business-token-store.ts');
      await orFail(storeBusinessToken(businessId, token));
    }
    await orFail(setMessagingAccount(businessId, need('phone-number-id'), need('waba-id')));
    out = { businessId, phoneNumberId: values['phone-number-id'], wabaId: values['waba-id'], accessToken: token === undefined ? 'stack' : 'own' };
    break;
  }
  case 'move-number': {
    const businessId = need('business');
    await requireBusiness(businessId);
    const { from } = await moveNumber(need('phone-number-id'), businessId, need('waba-id'));
    out = { phoneNumberId: values['phone-number-id'], from: from ?? null, to: businessId, wabaId: values['waba-id'] };
    break;
  }
  case 'rekey-contacts': {
    const businessId = need('business');
    await requireBusiness(businessId);
    const { rekeyShardOrder } = await import('#shared/contacts/filters/rekey.ts');
    out = { businessId, rekeyed: await rekeyShardOrder(businessId) };
    break;
  }
  default:
    fail(`unknown command ${command}; commands: ${Object.keys(USAGE).join(', ')} (--help for their flags)`);
}
process.stdout.write(`${JSON.stringify(out)}\n`);
process.exit(0);
