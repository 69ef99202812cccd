/**
 * What each function's code needs from the deployment, derived from the files its package is built from
 * (infra/bundle.ts: index.mjs and every chunk it loads), never from a list kept by hand:
 *
 * - settings: the string literal of every `requiredEnv('X')` (must be provided), `optionalEnv('X')`, `numberEnv('X'`,
 *   `boolEnv('X'` and plain `process.env.X` read (may be provided) in a source file that contributes code;
 * - queues: the literal queue name of every `enqueue('name'` and `enqueueAll('name'` call;
 * - AWS services: the SDK clients bundled (DynamoDB, S3, Secrets Manager, EventBridge Scheduler, Bedrock), and
 *   PartiQL statements (`ExecuteStatementCommand`).
 *
 * The stack grants each function these and nothing more (the derivation is the upper bound of its permissions),
 * and the infra test asserts that the synthesized template provides all of them.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { transformSync } from 'esbuild';
import type { FunctionBundle } from './bundle.ts';

export interface FunctionNeeds {
  handler: string;
  /** Settings read with `requiredEnv`: the function fails without them. */
  requiredSettings: string[];
  /** Settings read with a default (`optionalEnv`, `numberEnv`, `boolEnv`, plain `process.env`). */
  optionalSettings: string[];
  /** Queues it sends to. */
  queues: string[];
  table: boolean;
  partiql: boolean;
  bucket: boolean;
  /** Reads the stack's upstream credentials secret (a Secrets Manager client and `UPSTREAM_SECRET_ARN`). */
  upstreamSecret: boolean;
  /** Reads per-business secrets named `<BUSINESS_TOKEN_SECRET_PREFIX><businessId>`. */
  businessSecrets: boolean;
  scheduler: boolean;
  bedrock: boolean;
}

const literals = (code: string, pattern: RegExp): string[] => [...code.matchAll(pattern)].map((m) => m[1]);

const REQUIRED = /\brequiredEnv\(\s*["']([A-Z][A-Z0-9_]*)["']/g;
const OPTIONAL = /\b(?:optionalEnv|numberEnv|boolEnv)\(\s*["']([A-Z][A-Z0-9_]*)["']/g;
const PLAIN = /\bprocess\.env(?:\.([A-Z][A-Z0-9_]*)|\[\s*["']([A-Z][A-Z0-9_]*)["']\s*\])/g;
const ENQUEUE = /\benqueue(?:All)?\(\s*["']([a-z][a-z0-9-]*)["']/g;

const sdk = (name: string) => (file: string) => file.includes(`node_modules/@aws-sdk/${name}/`);
const usesDynamo = sdk('client-dynamodb');
const usesS3 = sdk('client-s3');
const usesSecretsManager = sdk('client-secrets-manager');
const usesScheduler = sdk('client-scheduler');
const usesBedrock = sdk('client-bedrock-runtime');

const ownCode = new Map<string, string>();
/** A source file without comments and types (so a name in a doc comment is not a read), cached across functions. */
const codeOf = (root: string, file: string): string => {
  let code = ownCode.get(file);
  if (code === undefined) {
    code = transformSync(readFileSync(join(root, file), 'utf8'), { loader: file.endsWith('.ts') ? 'ts' : 'js', legalComments: 'none' }).code;
    ownCode.set(file, code);
  }
  return code;
};

export function deriveNeeds(root: string, bundle: FunctionBundle): FunctionNeeds {
  const required = new Set<string>();
  const optional = new Set<string>();
  const queues = new Set<string>();
  let partiql = false;
  for (const file of bundle.inputs.filter((f) => !f.includes('node_modules/'))) {
    const code = codeOf(root, file);
    literals(code, REQUIRED).forEach((n) => required.add(n));
    literals(code, OPTIONAL).forEach((n) => optional.add(n));
    for (const m of code.matchAll(PLAIN)) optional.add(m[1] ?? m[2]);
    literals(code, ENQUEUE).forEach((q) => queues.add(q));
    partiql ||= /\bExecuteStatementCommand\b/.test(code);
  }
  for (const name of required) optional.delete(name);
  const reads = (name: string) => required.has(name) || optional.has(name);
  const secretsManager = bundle.inputs.some(usesSecretsManager);
  return {
    handler: bundle.handler,
    requiredSettings: [...required].sort(),
    optionalSettings: [...optional].sort(),
    queues: [...queues].sort(),
    table: bundle.inputs.some(usesDynamo),
    partiql,
    bucket: bundle.inputs.some(usesS3),
    upstreamSecret: secretsManager && reads('UPSTREAM_SECRET_ARN'),
    businessSecrets: secretsManager && reads('BUSINESS_TOKEN_SECRET_PREFIX'),
    scheduler: bundle.inputs.some(usesScheduler),
    bedrock: bundle.inputs.some(usesBedrock),
  };
}
