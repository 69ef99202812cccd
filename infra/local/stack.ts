/**
 * The whole service on this machine: DynamoDB Local, a local S3, the SQS, EventBridge Scheduler, Secrets Manager and
 * Bedrock runtime stand-ins (infra/local/aws/) with the pump that runs the workers on what SQS received, the upstream
 * sandbox, and the HTTP API. Used by `npm start` and by the e2e tests.
 *
 * The environment is set before any service module is imported, because shared/config.ts reads it once. It is
 * the environment a deployed function gets, with local endpoints: service code takes no local branch.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { LocalQueues } from './queues.ts';
import type { BedrockRuntimeStandIn } from './aws/bedrock-runtime.ts';
import { LOCAL_BUSINESS_TOKEN_SECRET_PREFIX, SANDBOX_APP_SECRET, SANDBOX_TOKEN, SANDBOX_VERIFY_TOKEN } from './sandbox/credentials.ts';

export interface LocalStackOptions {
  port?: number;
  sandboxPort?: number;
  dynamodbPort?: number;
  s3Port?: number;
  /** The Secrets Manager stand-in (a free port unless given). */
  secretsManagerPort?: number;
  /** Ports of the SQS and EventBridge Scheduler stand-ins (0: any free port). */
  sqsPort?: number;
  schedulerPort?: number;
  /** Reuse a running DynamoDB Local instead of starting one (the tests share one per run). */
  dynamodbEndpoint?: string;
  tableName?: string;
  /** Delay before a failed queue message is retried (short locally). */
  queueRetryDelayMs?: number;
  /** Create a demo business with an all-scopes key. */
  demo?: boolean;
  quiet?: boolean;
  /**
   * Run the scheduled functions at their rates, as EventBridge rules run them deployed (default: on). The outbox
   * sweep acts on every business in the table: a stack that shares its table with other processes' stacks (the
   * tests) turns the clock off, or it would deliver their events from its own queues and fail their sends in flight.
   */
  clock?: boolean;
  /** How long a minute of the clock lasts (default: a minute). */
  clockMinuteMs?: number;
}

export interface LocalStack {
  url: string;
  sandboxUrl: string;
  dynamodbEndpoint: string;
  s3Endpoint: string;
  tableName: string;
  queues: LocalQueues;
  /** The Bedrock runtime stand-in the AI agent asks (with the bedrock provider). */
  bedrock: BedrockRuntimeStandIn;
  demo?: { businessId: string; phoneNumberId: string; wabaId: string; apiKey: string; keyId: string };
  stop: () => Promise<void>;
}


/** How long one part of the stack may take to stop before the next one is stopped anyway. */
const STOP_STEP_MS = 3000;

export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    // In reverse order of starting. A part that hangs (a server waiting on a connection) does not keep the rest running:
    // DynamoDB Local's JVM above all, a child process that would outlive this one and keep its port.
    for (const s of [...stops].reverse()) await Promise.race([s().catch(() => undefined), sleep(STOP_STEP_MS, undefined, { ref: false })]);
  };
  try {
    // The sandbox first: service modules read UPSTREAM_BASE_URL once, whenever the first of them loads. It listens
    // before anything else opens connections (a port picked early and bound later could be taken meanwhile by an
    // outgoing connection's local port), and posts its webhooks to the API once that has started.
    const sandboxPort = options.sandboxPort === 0 || options.sandboxPort === undefined && process.env.SANDBOX_PORT === '0' ? 0 : options.sandboxPort ?? 3001;
    let apiUrl = '';
    // decisions.md: the sandbox signs, and the service checks, with `sandbox-app-secret` or UPSTREAM_APP_SECRET when set.
    const appSecret = process.env.UPSTREAM_APP_SECRET || SANDBOX_APP_SECRET;
    let upstreamEvents: (() => Promise<void>) | undefined;
    const { startSandbox } = await import('./sandbox/server.ts');
    const sandbox = await startSandbox({
      port: sandboxPort,
      serviceWebhookUrl: () => `${apiUrl}/webhooks/upstream`,
      appSecret,
      accessToken: SANDBOX_TOKEN,
      // Its inbound and status calls answer once the service has stored what they delivered (at most 10 s).
      processed: () => upstreamEvents?.() ?? Promise.resolve(),
    });
    stops.push(sandbox.close);
    process.env.UPSTREAM_BASE_URL = sandbox.url;

    const { startDynamo, ensureTable } = await import('./dynamo.ts');
    const { startS3 } = await import('./s3.ts');
    const tableName = options.tableName ?? process.env.TABLE_NAME ?? 'wa-crm';
    const bucket = process.env.MEDIA_BUCKET ?? 'wa-crm-media';

    let dynamodbEndpoint = options.dynamodbEndpoint;
    if (!dynamodbEndpoint) {
      const dynamo = await startDynamo(options.dynamodbPort ?? 8000);
      stops.push(dynamo.stop);
      dynamodbEndpoint = dynamo.endpoint;
    }
    await ensureTable(dynamodbEndpoint, tableName);
    const s3 = await startS3(options.s3Port ?? 0, bucket);
    stops.push(s3.stop);
    // The pump loads each worker module only when its first message arrives, after the environment below is set.
    const { startQueueServices } = await import('./aws/queue-services.ts');
    const { LocalQueues } = await import('./queues.ts');
    const queues = new LocalQueues(await startQueueServices({ sqs: options.sqsPort ?? 0, scheduler: options.schedulerPort ?? 0 }), {
      retryDelayMs: options.queueRetryDelayMs ?? 1000,
      onError: (queue, err) => {
        if (!options.quiet) console.error(`[queue ${queue}]`, (err as Error)?.message ?? err);
      },
    }).start();
    stops.push(() => queues.stop());

    const apiPort = options.port ?? 3000;

    // The upstream credentials reach the service the way they do in AWS: a Secrets Manager secret, read through the SDK.
    const { startSecretsManager } = await import('./aws/secrets-manager.ts');
    const secretsManager = await startSecretsManager({ port: options.secretsManagerPort ?? 0 });
    stops.push(secretsManager.close);
    const upstreamSecretArn = secretsManager.putSecret('wa-crm/upstream', JSON.stringify({ token: SANDBOX_TOKEN, appSecret, verifyToken: SANDBOX_VERIFY_TOKEN }));
    // The AI agent's model, as deployed: Bedrock's Converse API, here a stand-in answering with the sandbox's model.
    const { startBedrockRuntime } = await import('./aws/bedrock-runtime.ts');
    const bedrock = await startBedrockRuntime();
    stops.push(bedrock.close);

    Object.assign(process.env, {
      TABLE_NAME: tableName,
      DYNAMODB_ENDPOINT: dynamodbEndpoint,
      MEDIA_BUCKET: bucket,
      S3_ENDPOINT: s3.endpoint,
      AWS_REGION: process.env.AWS_REGION ?? 'us-east-1',
      AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID ?? 'local',
      AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY ?? 'local',
      ...queues.services.environment,
      // The AI agent asks Bedrock as deployed (the stand-in above, through the SDK's endpoint variable) and answers
      // quickly (deployed: 3 s). AI_PROVIDER=openai with AI_BASE_URL points it at an OpenAI-compatible server instead
      // (by default the sandbox's responder, which gives the same answers).
      AI_PROVIDER: process.env.AI_PROVIDER ?? 'bedrock',
      AWS_ENDPOINT_URL_BEDROCK_RUNTIME: bedrock.endpoint,
      AI_BASE_URL: process.env.AI_BASE_URL ?? `${sandbox.url}/v1`,
      AI_DEBOUNCE_SECONDS: process.env.AI_DEBOUNCE_SECONDS ?? '1',
      ALLOW_PRIVATE_TARGETS: process.env.ALLOW_PRIVATE_TARGETS ?? '1',
      AWS_ENDPOINT_URL_SECRETS_MANAGER: secretsManager.endpoint,
      UPSTREAM_SECRET_ARN: upstreamSecretArn,
      BUSINESS_TOKEN_SECRET_PREFIX: LOCAL_BUSINESS_TOKEN_SECRET_PREFIX,
      // Webhook retries locally: 2 s, 8 s, 32 s... instead of 1 min, 4 min, 16 min... (9 attempts either way).
      WEBHOOK_RETRY_BASE_SECONDS: process.env.WEBHOOK_RETRY_BASE_SECONDS ?? '2',
    });

    upstreamEvents = () => queues.caughtUp('upstream-events', 10_000);
    const { inProcess, startApiServer, withUpstreamWebhooksObserved } = await import('./server.ts');
    const api = await startApiServer(apiPort, '127.0.0.1', withUpstreamWebhooksObserved(inProcess, () => sandbox));
    stops.push(api.close);
    apiUrl = api.url;
    // The scheduled functions (the outbox sweep: lost publishes, unconfirmed sends), on their EventBridge rules' clock.
    if (options.clock ?? true) {
      const { startClock, scheduledModules } = await import('./clock.ts');
      const stopClock = startClock(scheduledModules(), {
        minuteMs: options.clockMinuteMs,
        onError: (rule, err) => {
          if (!options.quiet) console.error(`[scheduled ${rule}]`, (err as Error)?.message ?? err);
        },
      });
      stops.push(async () => stopClock());
    }

    const stack: LocalStack = { url: api.url, sandboxUrl: sandbox.url, dynamodbEndpoint, s3Endpoint: s3.endpoint, tableName, queues, bedrock, stop };

    if (options.demo) {
      const { createBusiness } = await import('#shared/business/repository.ts');
      const { createApiKey } = await import('#shared/auth/api-keys.ts');
      const { SCOPES } = await import('#shared/auth/scopes.ts');
      const business = await createBusiness('Demo business');
      const key = await createApiKey(business.businessId, [...SCOPES]);
      sandbox.setDefaultPhoneNumberId(business.phoneNumberId!);
      stack.demo = { businessId: business.businessId, phoneNumberId: business.phoneNumberId!, wabaId: business.wabaId!, apiKey: key.apiKey, keyId: key.keyId };
    }
    return stack;
  } catch (err) {
    await stop();
    throw err;
  }
}
