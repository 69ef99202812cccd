/**
 * The service as `cdk deploy` ships it, run on this machine: every function starts in a process of its own
 * (infra/local/lambda/process.ts) from the package the synthesis bundled for it (the asset `cdk deploy` uploads:
 * bundled, split into shared chunks, with the node:http shim), with the environment the synthesized template gives
 * it, its references resolved to the local stand-ins (infra/local/template-env.ts). Nothing of the local runtime's
 * own defaults reaches a function: a setting the template forgets is missing here too, and the function fails as it
 * would in AWS.
 *
 * What the template cannot say, because AWS supplies it, is added the way AWS supplies it:
 * - the Lambda runtime's variables (region, credentials, function name);
 * - where each AWS service is (the SDK's standard `AWS_ENDPOINT_URL_<SERVICE>` variables, and the DynamoDB and S3
 *   endpoints of DynamoDB Local and the local S3) and where the WhatsApp Cloud API is (the sandbox).
 * One value of the template is replaced: `ALLOW_PRIVATE_TARGETS`, because every webhook receiver and media host a
 * test can run is on loopback, which a deployed stack rightly refuses.
 *
 * The API server routes like API Gateway (unmatched requests go to the `$default` route's function when the
 * template has one); the SQS stand-in's pump invokes the worker functions; the Bedrock runtime stand-in answers the
 * AI worker's Converse calls (infra/local/aws/bedrock-runtime.ts); the Scheduler stand-in fires schedules
 * into the queues; the clock (infra/local/clock.ts) invokes the functions the template's EventBridge rules target, at
 * their rates. Used by test/e2e/deployed/.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { QueueName } from '#shared/routes.ts';
import { ServiceStack } from '#infra/stack.ts';
import { writeOpenApiDocument } from '#infra/openapi-document.ts';
import { FunctionProcess } from './lambda/process.ts';
import { functionNameOf } from './lambda/context.ts';
import { templateFunctions, type CfnTemplate, type LocalResource } from './template-env.ts';
import { LOCAL_ACCOUNT, LOCAL_REGION } from './aws/sqs.ts';
import { SANDBOX_APP_SECRET, SANDBOX_TOKEN, SANDBOX_VERIFY_TOKEN } from './sandbox/credentials.ts';
import type { LocalQueues } from './queues.ts';
import type { BedrockRuntimeStandIn } from './aws/bedrock-runtime.ts';
import { startClock, type ClockRule } from './clock.ts';

export interface DeployedStackOptions {
  /** A running DynamoDB Local; the table is created if missing. */
  dynamodbEndpoint: string;
  tableName: string;
  /** The queues whose worker functions run (default: all). */
  queues?: QueueName[];
  /** Show the functions' own output (their logs). */
  verbose?: boolean;
  /**
   * How long a minute of the rules' clock lasts (default: a minute). The scheduled sweeps act on every business of
   * the table: give the stack a table of its own.
   */
  minuteMs?: number;
}

export interface DeployedStack {
  url: string;
  sandboxUrl: string;
  queues: LocalQueues;
  /** Where the AI worker's Converse calls go (and which models they asked for). */
  bedrock: BedrockRuntimeStandIn;
  /** The environment each started function was given, by handler module (for assertions). */
  environments: Map<string, Record<string, string>>;
  /** Stops every function's container; each starts again, cold, at its next invocation (bounds the processes kept). */
  recycle(): Promise<void>;
  stop(): Promise<void>;
}

/** Synthesizes the stack as `cdk synth` does, bundling and the OpenAPI document included, into a cloud assembly in `outdir`. */
async function synthesize(outdir: string): Promise<{ stack: ServiceStack; template: CfnTemplate }> {
  const app = new App({ context: { 'aws:cdk:enable-asset-metadata': true }, outdir });
  const stack = new ServiceStack(app, 'Deployed', { env: { account: LOCAL_ACCOUNT, region: LOCAL_REGION }, openApiDocumentPath: await writeOpenApiDocument() });
  const template = app.synth().getStackByName(stack.stackName).template as CfnTemplate;
  return { stack, template };
}

const logicalId = (stack: ServiceStack, construct: { node: { defaultChild?: unknown } }): string =>
  stack.getLogicalId(construct.node.defaultChild as never);

export async function startDeployedStack(options: DeployedStackOptions): Promise<DeployedStack> {
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch(() => undefined);
  };
  try {
    const assembly = mkdtempSync(join(tmpdir(), 'cdk-deployed-'));
    stops.push(async () => rmSync(assembly, { recursive: true, force: true }));
    const { stack, template } = await synthesize(assembly);
    const { ensureTable } = await import('./dynamo.ts');
    const { startS3 } = await import('./s3.ts');
    const { startSecretsManager } = await import('./aws/secrets-manager.ts');
    const { startQueueServices } = await import('./aws/queue-services.ts');
    const { LocalQueues } = await import('./queues.ts');
    const { startSandbox } = await import('./sandbox/server.ts');
    const { startApiServer, withUpstreamWebhooksObserved } = await import('./server.ts');

    await ensureTable(options.dynamodbEndpoint, options.tableName);
    const bucket = 'deployed-media';
    const s3 = await startS3(0, bucket);
    stops.push(s3.stop);
    const secretsManager = await startSecretsManager({ region: LOCAL_REGION });
    stops.push(secretsManager.close);
    const upstreamSecretArn = secretsManager.putSecret('deployed/upstream', JSON.stringify({ token: SANDBOX_TOKEN, appSecret: SANDBOX_APP_SECRET, verifyToken: SANDBOX_VERIFY_TOKEN }));
    const services = await startQueueServices();
    const { startBedrockRuntime } = await import('./aws/bedrock-runtime.ts');
    const bedrock = await startBedrockRuntime();
    stops.push(bedrock.close);

    // Each resource a function's environment refers to, as it exists on this machine.
    const resources: Record<string, LocalResource> = {
      [logicalId(stack, stack.table)]: { ref: options.tableName },
      [logicalId(stack, stack.bucket)]: { ref: bucket, attributes: { Arn: `arn:aws:s3:::${bucket}` } },
      [logicalId(stack, stack.resources.upstreamSecret)]: { ref: upstreamSecretArn },
    };
    for (const [name, queue] of stack.queues) {
      resources[logicalId(stack, queue)] = { ref: services.sqs.queueUrl(name), attributes: { Arn: services.sqs.queueArn(name), QueueName: name } };
    }
    for (const [id, r] of Object.entries(template.Resources)) {
      if (r.Type === 'AWS::IAM::Role') resources[id] = { ref: id, attributes: { Arn: `arn:aws:iam::${LOCAL_ACCOUNT}:role/${id}` } };
    }
    const byLogicalId = templateFunctions(template, { region: LOCAL_REGION, accountId: LOCAL_ACCOUNT, resources });

    let sandboxUrl = '';
    const environments = new Map<string, Record<string, string>>();
    const processes = new Map<string, FunctionProcess>();
    const functionOf = (module: string): FunctionProcess => {
      let p = processes.get(module);
      if (p) return p;
      const fn = stack.functions.get(module);
      if (!fn) throw new Error(`deployed: the template has no function for ${module}`);
      const configured = byLogicalId.get(logicalId(stack, fn));
      if (!configured) throw new Error(`deployed: no template resource for ${module}`);
      // The function's code: the asset directory its template resource names (as SAM reads it), entry index.mjs.
      const assetPath = template.Resources[logicalId(stack, fn)].Metadata?.['aws:asset:path'];
      if (typeof assetPath !== 'string') throw new Error(`deployed: no asset path for ${module}`);
      const endpoints = Object.fromEntries(Object.entries(services.environment).filter(([k]) => k.startsWith('AWS_ENDPOINT_URL_')));
      const environment: Record<string, string> = {
        ...configured.environment,
        // What the Lambda service itself sets in every function's environment.
        AWS_REGION: LOCAL_REGION,
        AWS_DEFAULT_REGION: LOCAL_REGION,
        AWS_ACCESS_KEY_ID: 'local',
        AWS_SECRET_ACCESS_KEY: 'local',
        AWS_LAMBDA_FUNCTION_NAME: functionNameOf(module),
        AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(configured.memoryMb),
        // Where the AWS services and the Cloud API are on this machine.
        ...endpoints,
        AWS_ENDPOINT_URL_SECRETS_MANAGER: secretsManager.endpoint,
        AWS_ENDPOINT_URL_BEDROCK_RUNTIME: bedrock.endpoint,
        DYNAMODB_ENDPOINT: options.dynamodbEndpoint,
        S3_ENDPOINT: s3.endpoint,
        UPSTREAM_BASE_URL: sandboxUrl,
        ALLOW_PRIVATE_TARGETS: 'true',
      };
      environments.set(module, environment);
      p = new FunctionProcess({ module, package: join(assembly, assetPath, 'index.mjs'), environment, timeoutMs: configured.timeoutSeconds * 1000, stdio: options.verbose ? 'inherit' : 'ignore' });
      processes.set(module, p);
      return p;
    };
    const recycle = async () => {
      await Promise.all([...processes.values()].map((p) => p.stop()));
    };
    stops.push(recycle);

    const queues = new LocalQueues(services, {
      retryDelayMs: 200,
      queues: options.queues,
      load: async (worker) => (event) => functionOf(worker.handler).invoke(event),
    }).start();
    stops.push(() => queues.stop());

    let sandbox: Awaited<ReturnType<typeof startSandbox>> | undefined;
    const invoke = (module: string, event: APIGatewayProxyEventV2) => functionOf(module).invoke<APIGatewayProxyStructuredResultV2>(event);
    const api = await startApiServer(0, '127.0.0.1', withUpstreamWebhooksObserved(invoke, () => sandbox));
    stops.push(api.close);
    sandbox = await startSandbox({ port: 0, serviceWebhookUrl: `${api.url}/webhooks/upstream`, appSecret: SANDBOX_APP_SECRET, accessToken: SANDBOX_TOKEN });
    stops.push(sandbox.close);
    sandboxUrl = sandbox.url;

    // The template's EventBridge rules: each targets a function, at a rate.
    const moduleOf = new Map([...stack.functions].map(([module, fn]) => [logicalId(stack, fn), module]));
    const rules: ClockRule[] = Object.entries(template.Resources).filter(([, r]) => r.Type === 'AWS::Events::Rule').flatMap(([name, r]) => {
      const rate = /^rate\((\d+) minutes?\)$/.exec(r.Properties.ScheduleExpression);
      if (!rate) throw new Error(`deployed: rule ${name} has a schedule the clock cannot run: ${r.Properties.ScheduleExpression}`);
      return (r.Properties.Targets as { Arn: { 'Fn::GetAtt': [string, string] } }[]).map((target) => {
        const module = moduleOf.get(target.Arn['Fn::GetAtt'][0]);
        if (!module) throw new Error(`deployed: rule ${name} targets no function of the stack`);
        return { name, everyMinutes: Number(rate[1]), invoke: (event) => functionOf(module).invoke(event) };
      });
    });
    const stopClock = startClock(rules, { minuteMs: options.minuteMs });
    stops.push(async () => stopClock());

    return { url: api.url, sandboxUrl: sandbox.url, queues, bedrock, environments, recycle, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
