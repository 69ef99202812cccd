/**
 * `npm run sam:env`: runs the synthesized stack's functions under SAM (`sam local invoke` / `start-api`) against the
 * local stack (`npm start`): DynamoDB Local, the local S3, the upstream sandbox and the local AWS stand-ins.
 *
 * SAM's `--env-vars` file only overrides variables a function declares in its template, so this writes two files
 * into the cloud assembly (beside the asset directories the template's `aws:asset:path` metadata names):
 * - `<stack>.sam.template.json`: the synthesized template with every function also declaring the endpoint variables;
 * - `sam-env.json`: for every function (by logical id), each variable's local value.
 *
 * Endpoints are seen from inside SAM's containers: `--host` (default host.docker.internal; on Linux
 * `--host 172.17.0.1`, or run SAM with `--docker-network host --host 127.0.0.1`).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { localPorts } from '../local/ports.ts';

type Template = { Resources: Record<string, { Type: string; Properties?: any; Metadata?: Record<string, unknown> }> };

export interface LocalStack {
  host: string;
  dynamodbPort: number;
  s3Port: number;
  sandboxPort: number;
  /** The local AWS stand-ins (infra/local/aws/): SQS, Secrets Manager, EventBridge Scheduler. */
  sqsEndpoint: string;
  secretsManagerEndpoint: string;
  schedulerEndpoint: string;
  tableName: string;
  bucket: string;
  upstreamSecretArn: string;
  businessSecretsPrefix: string;
}

const ACCOUNT = '000000000000';
const REGION = 'us-east-1';

/** Where each function's AWS SDK clients and upstream calls go: the same variables for every function. */
const endpointsOf = (local: LocalStack): Record<string, string> => {
  const at = (port: number) => `http://${local.host}:${port}`;
  return {
    DYNAMODB_ENDPOINT: at(local.dynamodbPort),
    AWS_ENDPOINT_URL_DYNAMODB: at(local.dynamodbPort),
    S3_ENDPOINT: at(local.s3Port),
    AWS_ENDPOINT_URL_S3: at(local.s3Port),
    AWS_ENDPOINT_URL_SQS: local.sqsEndpoint,
    AWS_ENDPOINT_URL_SECRETS_MANAGER: local.secretsManagerEndpoint,
    AWS_ENDPOINT_URL_SCHEDULER: local.schedulerEndpoint,
    UPSTREAM_BASE_URL: at(local.sandboxPort),
  };
};

/** The local value of a variable the template gives a function (most are references to resources of the stack). */
const localValue = (name: string, templateValue: unknown, local: LocalStack): string | undefined => {
  const queue = /^QUEUE_URL_(\w+)$/.exec(name)?.[1].toLowerCase().replace(/_/g, '-');
  if (queue) return `${local.sqsEndpoint}/${ACCOUNT}/${queue}`;
  const known: Record<string, string> = {
    TABLE_NAME: local.tableName,
    MEDIA_BUCKET: local.bucket,
    UPSTREAM_SECRET_ARN: local.upstreamSecretArn,
    BUSINESS_TOKEN_SECRET_PREFIX: local.businessSecretsPrefix,
    BROADCAST_QUEUE_ARN: `arn:aws:sqs:${REGION}:${ACCOUNT}:broadcasts`,
    BROADCAST_SCHEDULER_ROLE_ARN: `arn:aws:iam::${ACCOUNT}:role/broadcast-scheduler`,
    // The local targets (sandbox, webhook receivers) are on private addresses; the model is the sandbox's.
    ALLOW_PRIVATE_TARGETS: 'true',
    AI_PROVIDER: 'openai',
    AI_MODEL: 'sandbox-echo',
    AI_ALLOWED_MODELS: 'sandbox-echo',
  };
  if (name in known) return known[name];
  return typeof templateValue === 'string' ? templateValue : undefined;
};

export function samEnvironment(template: Template, local: LocalStack): { envVars: Record<string, Record<string, string>>; samTemplate: Template } {
  const endpoints = endpointsOf(local);
  const samTemplate: Template = structuredClone(template);
  const envVars: Record<string, Record<string, string>> = {};
  for (const [logicalId, resource] of Object.entries(samTemplate.Resources)) {
    if (resource.Type !== 'AWS::Lambda::Function' || !resource.Metadata?.['aws:asset:path']) continue;
    const variables: Record<string, unknown> = resource.Properties.Environment?.Variables ?? {};
    const values: Record<string, string> = { ...endpoints };
    for (const [name, value] of Object.entries(variables)) {
      const v = localValue(name, value, local);
      if (v === undefined) throw new Error(`${logicalId}: no local value for ${name} (add it to infra/sam/env.ts)`);
      values[name] = v;
    }
    // Declared (empty) in the SAM template, so that SAM lets --env-vars set them.
    resource.Properties.Environment = { Variables: Object.fromEntries(Object.keys(values).map((name) => [name, ''])) };
    envVars[logicalId] = values;
  }
  return { envVars, samTemplate };
}

const main = () => {
  const { values } = parseArgs({
    options: {
      stack: { type: 'string', default: 'WaCrmService' },
      assembly: { type: 'string', default: 'cdk.out' },
      host: { type: 'string', default: 'host.docker.internal' },
      sqs: { type: 'string' },
      secrets: { type: 'string' },
      scheduler: { type: 'string' },
    },
  });
  const env = process.env;
  const host = values.host!;
  const ports = localPorts();
  const local: LocalStack = {
    host,
    dynamodbPort: ports.dynamodbPort,
    s3Port: ports.s3Port,
    sandboxPort: ports.sandboxPort,
    sqsEndpoint: values.sqs ?? `http://${host}:${ports.sqsPort}`,
    secretsManagerEndpoint: values.secrets ?? `http://${host}:${ports.secretsManagerPort}`,
    schedulerEndpoint: values.scheduler ?? `http://${host}:${ports.schedulerPort}`,
    tableName: env.TABLE_NAME ?? 'wa-crm',
    bucket: env.MEDIA_BUCKET ?? 'wa-crm-media',
    upstreamSecretArn: env.UPSTREAM_SECRET_ARN ?? `arn:aws:secretsmanager:${REGION}:${ACCOUNT}:secret:wa-crm/upstream`,
    businessSecretsPrefix: env.BUSINESS_TOKEN_SECRET_PREFIX ?? 'wa-crm/business-token/',
  };
  const templatePath = join(values.assembly!, `${values.stack}.template.json`);
  const { envVars, samTemplate } = samEnvironment(JSON.parse(readFileSync(templatePath, 'utf8')), local);
  const samTemplatePath = join(values.assembly!, `${values.stack}.sam.template.json`);
  const envPath = join(values.assembly!, 'sam-env.json');
  writeFileSync(samTemplatePath, JSON.stringify(samTemplate, null, 1));
  writeFileSync(envPath, JSON.stringify(envVars, null, 2));
  console.log(`sam local invoke -t ${samTemplatePath} --env-vars ${envPath} <FunctionLogicalId> -e infra/sam/events/<worker>.json`);
  console.log(`sam local start-api -t ${samTemplatePath} --env-vars ${envPath}`);
};

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();
