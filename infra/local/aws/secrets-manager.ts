/**
 * A local stand-in for AWS Secrets Manager, at the endpoint the SDK client is pointed at with
 * `AWS_ENDPOINT_URL_SECRETS_MANAGER` (the SDK's standard per-service endpoint variable). It speaks the client's
 * wire protocol (AWS JSON 1.1: `POST /`, `X-Amz-Target: secretsmanager.<Operation>`) for exactly the calls the
 * service and the admin CLI make: GetSecretValue, CreateSecret and PutSecretValue. Errors come back the way
 * the SDK parses them (`__type` + `Message`), so `ResourceNotFoundException` is the SDK's own class.
 *
 * No npm-installable emulator of Secrets Manager exists; this replaces nothing of ours: service code runs the
 * same `@aws-sdk/client-secrets-manager` (through Powertools Parameters) it runs in AWS. State is in memory.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomBytes, randomUUID } from 'node:crypto';
import { LOCAL_ACCOUNT } from './sqs.ts';
import { listen, readBody, replyJson } from './wire.ts';

interface StoredSecret {
  arn: string;
  name: string;
  versionId: string;
  value: string;
  createdAt: number;
}

export interface SecretsManagerStandIn {
  /** The value for AWS_ENDPOINT_URL_SECRETS_MANAGER. */
  endpoint: string;
  /** Creates a secret (or replaces its value) and answers its ARN. */
  putSecret(name: string, value: string): string;
  close(): Promise<void>;
}

// Plain fields, not parameter properties: jest's global setup loads this file with Node's type stripping.
class AwsError extends Error {
  readonly type: string;
  readonly status: number;
  constructor(type: string, message: string, status = 400) {
    super(message);
    this.type = type;
    this.status = status;
  }
}

const notFound = () => new AwsError('ResourceNotFoundException', "Secrets Manager can't find the specified secret.");

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const raw = await readBody(req);
  try {
    const parsed = JSON.parse(raw || '{}');
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed;
  } catch {
    /* answered below */
  }
  throw new AwsError('SerializationException', 'The request body is not a JSON object');
}

const stringField = (body: Record<string, unknown>, field: string): string => {
  const value = body[field];
  if (typeof value !== 'string' || value === '') throw new AwsError('InvalidParameterException', `${field} is required`);
  return value;
};

export async function startSecretsManager({ port = 0, region = process.env.AWS_REGION ?? 'us-east-1' } = {}): Promise<SecretsManagerStandIn> {
  const byName = new Map<string, StoredSecret>();
  const byArn = new Map<string, StoredSecret>();

  const find = (secretId: string): StoredSecret => byName.get(secretId) ?? byArn.get(secretId) ?? (() => { throw notFound(); })();

  const create = (name: string, value: string): StoredSecret => {
    if (byName.has(name)) throw new AwsError('ResourceExistsException', `The operation failed because the secret ${name} already exists.`);
    // Real ARNs end in a dash and six random characters, so a name is never a valid ARN suffix by itself.
    const secret = { arn: `arn:aws:secretsmanager:${region}:${LOCAL_ACCOUNT}:secret:${name}-${randomBytes(3).toString('hex')}`, name, versionId: randomUUID(), value, createdAt: Date.now() };
    byName.set(name, secret);
    byArn.set(secret.arn, secret);
    return secret;
  };

  const put = (secret: StoredSecret, value: string) => Object.assign(secret, { value, versionId: randomUUID() });

  const operations: Record<string, (body: Record<string, unknown>) => Record<string, unknown>> = {
    GetSecretValue: (body) => {
      const s = find(stringField(body, 'SecretId'));
      return { ARN: s.arn, Name: s.name, VersionId: s.versionId, SecretString: s.value, VersionStages: ['AWSCURRENT'], CreatedDate: s.createdAt / 1000 };
    },
    CreateSecret: (body) => {
      const s = create(stringField(body, 'Name'), stringField(body, 'SecretString'));
      return { ARN: s.arn, Name: s.name, VersionId: s.versionId };
    },
    PutSecretValue: (body) => {
      const s = put(find(stringField(body, 'SecretId')), stringField(body, 'SecretString'));
      return { ARN: s.arn, Name: s.name, VersionId: s.versionId, VersionStages: ['AWSCURRENT'] };
    },
  };

  const reply = (res: ServerResponse, status: number, body: unknown) =>
    replyJson(res, status, body, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': randomUUID() });

  const server = await listen(port, (req, res) => {
    const target = String(req.headers['x-amz-target'] ?? '');
    const operation = target.startsWith('secretsmanager.') ? operations[target.slice('secretsmanager.'.length)] : undefined;
    (async () => {
      if (req.method !== 'POST' || !operation) throw new AwsError('UnknownOperationException', `The stand-in does not implement ${target || 'this request'}`);
      return reply(res, 200, operation(await readJson(req)));
    })().catch((err) => {
      const e = err instanceof AwsError ? err : new AwsError('InternalServiceError', String((err as Error)?.message ?? err), 500);
      reply(res, e.status, { __type: e.type, Message: e.message });
    });
  });

  return {
    endpoint: server.url,
    putSecret: (name, value) => (byName.has(name) ? put(byName.get(name)!, value) : create(name, value)).arn,
    close: server.close,
  };
}
