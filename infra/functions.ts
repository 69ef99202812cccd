/**
 * Function wiring: one Lambda per handler module, deployed from its bundle (infra/bundle.ts), given exactly the
 * settings and grants its code needs (infra/needs.ts). A function that reads with `requiredEnv` a setting the
 * stack cannot provide fails the synth, not its first request.
 */
import { join } from 'node:path';
import {
  Aws,
  Duration,
  RemovalPolicy,
  Stage,
  type Stack,
  aws_iam as iam,
  aws_lambda as lambda,
  aws_logs as logs,
} from 'aws-cdk-lib';
import { routes, scheduled, workers } from '../shared/routes.ts';
import { bundleFunctions, type BundleRequest } from './bundle.ts';
import { deriveNeeds, type FunctionNeeds } from './needs.ts';
import { pascal, queueUrlSetting } from './names.ts';
import type { ServiceResources } from './resources.ts';

/** Answers every request no route matches (the HTTP API's `$default` route). */
export const NOT_FOUND_HANDLER = 'http/meta/not-found';

/**
 * A cross-Region inference profile's id: a geography before the model id (`eu.amazon.nova-lite-v1:0`), the way Bedrock
 * serves a model in Regions where it has no on-demand throughput of its own.
 */
export const INFERENCE_PROFILE = /^(us|us-gov|eu|apac|jp|au|ca|global)\./;

/**
 * What invoking `model` needs: a foundation model in the stack's Region, or for an inference profile the profile
 * and its model in every Region the profile may route a call to (AWS's rule for profiles).
 */
export const bedrockModelArns = (model: string): string[] =>
  INFERENCE_PROFILE.test(model)
    ? [`arn:${Aws.PARTITION}:bedrock:${Aws.REGION}:${Aws.ACCOUNT_ID}:inference-profile/${model}`, `arn:${Aws.PARTITION}:bedrock:*::foundation-model/${model.replace(INFERENCE_PROFILE, '')}`]
    : [`arn:${Aws.PARTITION}:bedrock:${Aws.REGION}::foundation-model/${model}`];

export interface FunctionSpec {
  handler: string;
  memoryMb?: number;
  timeoutSeconds?: number;
  nativeMedia?: boolean;
}

/** Every handler module the stack deploys, once each (several routes may share one module). */
export const functionSpecs = (): FunctionSpec[] => {
  const specs = new Map<string, FunctionSpec>();
  for (const spec of [...routes, ...workers, ...scheduled, { handler: NOT_FOUND_HANDLER }]) {
    if (!specs.has(spec.handler)) specs.set(spec.handler, spec);
  }
  return [...specs.values()];
};

/** Variables the Lambda runtime sets itself. */
const RUNTIME_PROVIDED = /^(AWS_|LAMBDA_|_)/;

export interface FunctionWiringInput {
  root: string;
  resources: ServiceResources;
  /** Values the stack can give a function, by variable name; each function gets those its code reads. */
  settings: Record<string, string>;
  /** The role EventBridge Scheduler assumes to start broadcasts (passed by the functions that create schedules). */
  schedulerRole: iam.Role;
  /** Prefix of the per-business token secrets' names. */
  businessSecretsPrefix: string;
  /** Bedrock foundation models a business may choose. */
  aiModels: string[];
  /** The OpenAPI document shipped beside the meta functions' bundles. */
  openApiDocumentPath: string;
}

export interface ServiceFunctions {
  functions: Map<string, lambda.Function>;
  needs: Map<string, FunctionNeeds>;
}

/** Settings implied by the resources a function's code uses (its SDK client must know which one). */
const impliedSettings = (needs: FunctionNeeds): string[] => [
  ...(needs.table ? ['TABLE_NAME'] : []),
  ...(needs.bucket ? ['MEDIA_BUCKET'] : []),
  ...(needs.upstreamSecret ? ['UPSTREAM_SECRET_ARN'] : []),
  ...(needs.businessSecrets ? ['BUSINESS_TOKEN_SECRET_PREFIX'] : []),
  ...(needs.scheduler ? ['BROADCAST_QUEUE_ARN', 'BROADCAST_SCHEDULER_ROLE_ARN'] : []),
  ...(needs.bedrock ? ['AI_ALLOWED_MODELS'] : []),
  ...needs.queues.map(queueUrlSetting),
];

export function environmentFor(needs: FunctionNeeds, settings: Record<string, string>): Record<string, string> {
  const missing = needs.requiredSettings.filter((name) => !(name in settings) && !RUNTIME_PROVIDED.test(name));
  if (missing.length) throw new Error(`functions/${needs.handler}.ts requires ${missing.join(', ')}, which the stack does not provide (infra/stack.ts settings)`);
  const environment: Record<string, string> = { NODE_OPTIONS: '--enable-source-maps', POWERTOOLS_SERVICE_NAME: 'wa-crm' };
  for (const name of [...needs.requiredSettings, ...needs.optionalSettings, ...impliedSettings(needs)]) {
    if (name in settings) environment[name] = settings[name];
  }
  return environment;
}

export function createFunctions(stack: Stack, input: FunctionWiringInput): ServiceFunctions {
  const { root, resources, schedulerRole } = input;
  const specs = functionSpecs();
  const bundles = bundleFunctions(root, specs.map((spec): BundleRequest => ({
    handler: spec.handler,
    nativeMedia: spec.nativeMedia,
    extraFiles: extraFilesOf(root, spec.handler, input.openApiDocumentPath),
  })), join(Stage.of(stack)!.outdir, '.bundles'), { write: stack.bundlingRequired });

  // Functions with the same grants share one role, and one log group per area: CloudFormation allows 500 resources
  // a stack, and a role, a policy and a log group for each of ~70 functions would spend ~200 of them.
  const roles = new Map<string, iam.Role>();
  const roleFor = (needs: FunctionNeeds) => {
    const grants = { ...needs, handler: undefined, requiredSettings: undefined, optionalSettings: undefined };
    const signature = JSON.stringify(grants);
    let role = roles.get(signature);
    if (role) return role;
    role = new iam.Role(stack, `Role${roles.size + 1}`, {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: describeGrants(needs),
      managedPolicies: [iam.ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSLambdaBasicExecutionRole')],
    });
    if (needs.table) resources.table.grantReadWriteData(role);
    // Batch reads of keyed partitions in one PartiQL SELECT (`pk IN [...]`, a query per partition, never a scan).
    if (needs.partiql) role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['dynamodb:PartiQLSelect'], resources: [resources.table.tableArn] }));
    for (const queue of needs.queues) {
      const q = resources.queues.get(queue);
      if (!q) throw new Error(`functions/${needs.handler}.ts sends to queue "${queue}", which shared/routes.ts does not define`);
      q.grantSendMessages(role);
    }
    if (needs.bucket) resources.bucket.grantReadWrite(role);
    if (needs.upstreamSecret) resources.upstreamSecret.grantRead(role);
    if (needs.businessSecrets) {
      role.addToPrincipalPolicy(new iam.PolicyStatement({
        actions: ['secretsmanager:GetSecretValue'],
        resources: [`arn:${Aws.PARTITION}:secretsmanager:${Aws.REGION}:${Aws.ACCOUNT_ID}:secret:${input.businessSecretsPrefix}*`],
      }));
    }
    if (needs.scheduler) {
      role.addToPrincipalPolicy(new iam.PolicyStatement({
        actions: ['scheduler:CreateSchedule', 'scheduler:UpdateSchedule', 'scheduler:DeleteSchedule'],
        resources: [`arn:${Aws.PARTITION}:scheduler:${Aws.REGION}:${Aws.ACCOUNT_ID}:schedule/default/broadcast-*`],
      }));
      role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['iam:PassRole'], resources: [schedulerRole.roleArn] }));
    }
    if (needs.bedrock) {
      role.addToPrincipalPolicy(new iam.PolicyStatement({
        actions: ['bedrock:InvokeModel'],
        resources: input.aiModels.flatMap(bedrockModelArns),
      }));
    }
    roles.set(signature, role);
    return role;
  };

  const logGroups = new Map<string, logs.LogGroup>();
  const logGroupFor = (handler: string) => {
    const area = handler.split('/').slice(0, 2).join('/');
    let group = logGroups.get(area);
    if (!group) {
      group = new logs.LogGroup(stack, `${pascal(area)}Logs`, { retention: logs.RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
      logGroups.set(area, group);
    }
    return group;
  };

  const functions = new Map<string, lambda.Function>();
  const allNeeds = new Map<string, FunctionNeeds>();
  for (const spec of specs) {
    const needs = deriveNeeds(root, bundles.get(spec.handler)!);
    allNeeds.set(spec.handler, needs);
    functions.set(spec.handler, new lambda.Function(stack, pascal(spec.handler.replace(/\//g, '-')), {
      code: lambda.Code.fromAsset(bundles.get(spec.handler)!.dir),
      handler: 'index.handler',
      runtime: lambda.Runtime.NODEJS_22_X,
      // arm64 where the bundle allows; the media worker ships x64 native sharp/ffmpeg builds, so it runs on x86_64.
      architecture: spec.nativeMedia ? lambda.Architecture.X86_64 : lambda.Architecture.ARM_64,
      memorySize: spec.memoryMb ?? 256,
      timeout: Duration.seconds(spec.timeoutSeconds ?? 10),
      tracing: lambda.Tracing.ACTIVE,
      logGroup: logGroupFor(spec.handler),
      role: roleFor(needs),
      loggingFormat: lambda.LoggingFormat.JSON,
      environment: environmentFor(needs, input.settings),
    }));
  }
  return { functions, needs: allNeeds };
}

/** Files the meta functions serve from beside their bundle: the OpenAPI document and the docs renderer's script. */
const extraFilesOf = (root: string, handler: string, openApiDocumentPath: string): Record<string, string> => ({
  ...(handler.startsWith('http/meta/') ? { [openApiDocumentPath]: 'openapi.json' } : {}),
  ...(handler === 'http/meta/docs-asset' ? { [join(root, 'node_modules/@scalar/api-reference/dist/browser/standalone.js')]: 'scalar.js' } : {}),
});

const describeGrants = (needs: FunctionNeeds): string => {
  const uses = [
    needs.table && 'the table', needs.bucket && 'media', needs.upstreamSecret && 'the upstream secret', needs.businessSecrets && 'business secrets',
    needs.scheduler && 'the scheduler', needs.bedrock && 'Bedrock', needs.queues.length && `queues ${needs.queues.join(', ')}`,
  ].filter(Boolean);
  return `Functions that use ${uses.length ? uses.join(', ') : 'nothing but their logs'}`.slice(0, 1000);
};
