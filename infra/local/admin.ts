/**
 * The admin CLI: `npm run --silent admin -- <command> [--flag value]...`, one JSON object on stdout.
 * It reaches the table named by TABLE_NAME at DYNAMODB_ENDPOINT (the local stack prints it), or, with
 * AWS credentials and no endpoint, a deployed stack's table.
 */
import { parseArgs } from 'node:util';

// Without an endpoint or AWS credentials, the CLI talks to the local stack's DynamoDB (DYNAMODB_PORT, default 8000).
if (!process.env.DYNAMODB_ENDPOINT && !process.env.AWS_ACCESS_KEY_ID && !process.env.AWS_PROFILE) {
  process.env.DYNAMODB_ENDPOINT = `http://127.0.0.1:${process.env.DYNAMODB_PORT ?? 8000}`;
}
// A local DynamoDB holds the local stack's table unless told otherwise; a deployed table must be named (TABLE_NAME).
if (process.env.DYNAMODB_ENDPOINT) process.env.TABLE_NAME ??= 'wa-crm';

const [command, ...rest] = process.argv.slice(2);
const { values } = parseArgs({
  args: rest,
  options: {
    name: { type: 'string' },
    business: { type: 'string' },
    scopes: { type: 'string' },
    'key-id': { type: 'string' },
    email: { type: 'string' },
    role: { type: 'string' },
    available: { type: 'string' },
    'phone-number-id': { type: 'string' },
    'waba-id': { type: 'string' },
  },
  strict: true,
});

const fail = (message: string): never => {
  process.stdout.write(`${JSON.stringify({ error: message })}\n`);
  process.exit(1);
};
const need = (flag: keyof typeof values): string => (values[flag] as string | undefined) ?? fail(`--${flag} is required`);

const { createBusiness, getBusiness, setMessagingAccount } = await import('#shared/business/repository.ts');
const { createApiKey, revokeApiKey } = await import('#shared/auth/api-keys.ts');
const { SCOPES, isScope } = await import('#shared/auth/scopes.ts');
const { addAgent } = await import('#shared/team/repository.ts');

const requireBusiness = async (id: string) => (await getBusiness(id)) ?? fail(`business ${id} not found`);

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
    await setMessagingAccount(businessId, need('phone-number-id'), need('waba-id'));
    out = { businessId, phoneNumberId: values['phone-number-id'], wabaId: values['waba-id'] };
    break;
  }
  default:
    fail(`unknown command ${command ?? '(none)'}; commands: create-business, create-key, revoke-key, add-agent, set-messaging`);
}
process.stdout.write(`${JSON.stringify(out)}\n`);
process.exit(0);
