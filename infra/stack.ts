/**
 * The deployed service: one DynamoDB table, a media bucket, one Lambda per HTTP handler module behind an
 * HTTP API, one SQS queue (with its DLQ) and worker Lambda per entry of `workers`, the scheduled outbox sweep,
 * and the upstream credentials in Secrets Manager. Everything is derived from functions/routes.ts and
 * infra/table.ts, so adding an endpoint is a row and a handler file.
 */
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { existsSync } from 'node:fs';
import {
  Aws,
  CfnOutput,
  Duration,
  RemovalPolicy,
  Stack,
  type StackProps,
  aws_apigatewayv2 as apigw,
  aws_apigatewayv2_integrations as integrations,
  aws_cloudwatch as cloudwatch,
  aws_dynamodb as dynamodb,
  aws_events as events,
  aws_events_targets as targets,
  aws_iam as iam,
  aws_lambda as lambda,
  aws_lambda_event_sources as sources,
  aws_lambda_nodejs as nodejs,
  aws_logs as logs,
  aws_s3 as s3,
  aws_secretsmanager as secretsmanager,
  aws_sqs as sqs,
  Validations,
} from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { routes, workers, type Worker } from '../functions/routes.ts';
import { tableDefinition } from './table.ts';
import { bundling } from './bundling.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

export interface ServiceStackProps extends StackProps {
  /** Upstream API version, e.g. v21.0. */
  upstreamApiVersion?: string;
  /** Per-key limits (per minute); a plan may change them. */
  limits?: { requests?: number; messages?: number; bulk?: number };
  /** The OpenAPI document generated at synth time (infra/app.ts), shipped beside the meta functions' bundles. */
  openApiDocumentPath?: string;
}

/** Which queues a handler module may send to (least privilege: each function gets only these). */
const queuesSentBy = (handler: string): string[] => {
  const area = handler.split('/')[1] ?? handler;
  const sends = new Set<string>(['events']); // every state change may publish its events
  if (handler.startsWith('http/messages') || handler.startsWith('http/media')) sends.add('media');
  if (handler === 'http/upstream/receive') sends.add('upstream-events');
  if (area === 'broadcasts' || handler === 'workers/broadcast') sends.add('broadcasts');
  if (handler === 'workers/upstream-events') sends.add('ai');
  if (handler === 'workers/ai') ['ai', 'media'].forEach((q) => sends.add(q));
  if (handler === 'workers/event-fanout' || handler === 'workers/webhook-delivery' || area === 'webhooks') sends.add('webhook-deliveries');
  if (handler === 'workers/broadcast') sends.add('media');
  return [...sends];
};

/** Handlers that read or write media objects. */
const usesBucket = (handler: string) =>
  handler.startsWith('http/media') || handler.startsWith('http/messages') || handler === 'workers/media' || handler === 'workers/ai' || handler === 'workers/broadcast';

/** Handlers that talk to the upstream API (need its credentials). */
const usesUpstream = (handler: string) =>
  handler.startsWith('http/messages') || handler.startsWith('http/media') || handler.startsWith('http/upstream') || handler.startsWith('http/broadcasts') ||
  ['workers/media', 'workers/ai', 'workers/broadcast', 'workers/upstream-events'].includes(handler);

export class ServiceStack extends Stack {
  readonly table: dynamodb.TableV2;
  readonly bucket: s3.Bucket;
  readonly api: apigw.HttpApi;
  readonly functions = new Map<string, nodejs.NodejsFunction>();
  readonly queues = new Map<string, sqs.Queue>();

  constructor(scope: Construct, id: string, props: ServiceStackProps = {}) {
    super(scope, id, props);

    // The single table: on-demand, point-in-time recovery, TTL for short-lived items, kept on stack deletion.
    this.table = new dynamodb.TableV2(this, 'Table', {
      partitionKey: { name: tableDefinition.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: tableDefinition.sortKey, type: dynamodb.AttributeType.STRING },
      billing: dynamodb.Billing.onDemand(),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: tableDefinition.ttlAttribute,
      encryption: dynamodb.TableEncryptionV2.awsManagedKey(),
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
      globalSecondaryIndexes: tableDefinition.indexes.map((ix) => ({
        indexName: ix.name,
        partitionKey: { name: ix.partitionKey, type: dynamodb.AttributeType.STRING },
        sortKey: { name: ix.sortKey, type: dynamodb.AttributeType.STRING },
        projectionType: ix.projection === 'ALL' ? dynamodb.ProjectionType.ALL : dynamodb.ProjectionType.INCLUDE,
        nonKeyAttributes: ix.projection === 'ALL' ? undefined : [...ix.include],
      })),
    });

    // Media: private, encrypted, TLS only; access logs go to their own bucket.
    const accessLogs = new s3.Bucket(this, 'AccessLogs', {
      encryption: s3.BucketEncryption.S3_MANAGED,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      lifecycleRules: [{ expiration: Duration.days(90) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.bucket = new s3.Bucket(this, 'Media', {
      encryption: s3.BucketEncryption.S3_MANAGED,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      serverAccessLogsBucket: accessLogs,
      serverAccessLogsPrefix: 'media/',
      // Media ids expire upstream after about 30 days; the copies here need not outlive them by much.
      lifecycleRules: [{ expiration: Duration.days(35) }, { abortIncompleteMultipartUploadAfter: Duration.days(1) }],
      cors: [{ allowedMethods: [s3.HttpMethods.PUT, s3.HttpMethods.POST], allowedOrigins: ['*'], allowedHeaders: ['*'] }],
      removalPolicy: RemovalPolicy.RETAIN,
    });

    // Upstream credentials (WhatsApp Cloud API access token, app secret, webhook verify token), set after deploy.
    const upstreamSecret = new secretsmanager.Secret(this, 'UpstreamCredentials', {
      description: 'WhatsApp Cloud API credentials: {"token":"...","appSecret":"...","verifyToken":"..."}',
      generateSecretString: {
        secretStringTemplate: JSON.stringify({ token: 'set-me', appSecret: 'set-me' }),
        generateStringKey: 'verifyToken',
        excludePunctuation: true,
      },
    });

    // Queues with dead-letter queues; the visibility timeout covers the worker's own timeout.
    for (const worker of workers) {
      const dlq = new sqs.Queue(this, `${pascal(worker.queue)}Dlq`, {
        retentionPeriod: Duration.days(14),
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
      });
      const queue = new sqs.Queue(this, `${pascal(worker.queue)}Queue`, {
        visibilityTimeout: Duration.seconds(Math.max(worker.visibilityTimeoutSeconds, 6 * (worker.timeoutSeconds ?? 30))),
        retentionPeriod: Duration.days(4),
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        deadLetterQueue: { queue: dlq, maxReceiveCount: worker.maxReceiveCount },
      });
      this.queues.set(worker.queue, queue);
      new cloudwatch.Alarm(this, `${pascal(worker.queue)}DlqAlarm`, {
        alarmDescription: `Messages in the ${worker.queue} dead-letter queue`,
        metric: dlq.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5) }),
        threshold: 1,
        evaluationPeriods: 1,
      });
    }

    const environment: Record<string, string> = {
      TABLE_NAME: this.table.tableName,
      MEDIA_BUCKET: this.bucket.bucketName,
      UPSTREAM_SECRET_ARN: upstreamSecret.secretArn,
      UPSTREAM_API_VERSION: props.upstreamApiVersion ?? 'v21.0',
      ALLOW_PRIVATE_TARGETS: 'false',
      LIMIT_REQUESTS_PER_MINUTE: String(props.limits?.requests ?? 100),
      LIMIT_MESSAGES_PER_MINUTE: String(props.limits?.messages ?? 1000),
      LIMIT_BULK_PER_MINUTE: String(props.limits?.bulk ?? 10),
      POWERTOOLS_SERVICE_NAME: 'wa-crm',
      NODE_OPTIONS: '--enable-source-maps',
    };
    for (const [name, queue] of this.queues) environment[`QUEUE_URL_${name.toUpperCase().replace(/-/g, '_')}`] = queue.queueUrl;

    // Functions with the same needs share one role and one log group per area: CloudFormation allows 500 resources
    // a stack, and a role, a policy and a log group for each of ~65 functions would spend ~200 of them.
    const roles = new Map<string, iam.Role>();
    const roleFor = (handler: string) => {
      const queues = queuesSentBy(handler).sort();
      const bucket = usesBucket(handler);
      const upstream = usesUpstream(handler);
      const signature = `${queues.join(',')}|${bucket}|${upstream}|${handler.startsWith('workers/') ? handler : 'http'}`;
      let role = roles.get(signature);
      if (!role) {
        role = new iam.Role(this, `Role${roles.size + 1}`, {
          assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
          description: `Functions that send to [${queues.join(', ')}]${bucket ? ', use media' : ''}${upstream ? ', call the upstream API' : ''}`,
          managedPolicies: [iam.ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSLambdaBasicExecutionRole')],
        });
        this.table.grantReadWriteData(role);
        for (const q of queues) this.queues.get(q)?.grantSendMessages(role);
        if (bucket) this.bucket.grantReadWrite(role);
        if (upstream) upstreamSecret.grantRead(role);
        // The fan-out reads the ordering-key partitions of a whole batch in one PartiQL SELECT (`pk IN [...]`,
        // a query per partition, never a scan: no other PartiQL action is granted, and no statement runs unkeyed).
        if (handler === 'workers/event-fanout') {
          role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['dynamodb:PartiQLSelect'], resources: [this.table.tableArn] }));
        }
        roles.set(signature, role);
      }
      return role;
    };
    const logGroups = new Map<string, logs.LogGroup>();
    const logGroupFor = (handler: string) => {
      const area = handler.split('/').slice(0, 2).join('/');
      let group = logGroups.get(area);
      if (!group) {
        group = new logs.LogGroup(this, `${pascal(area)}Logs`, { retention: logs.RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
        logGroups.set(area, group);
      }
      return group;
    };

    const fn = (handler: string, opts: { memoryMb?: number; timeoutSeconds?: number; nativeMedia?: boolean }) => {
      const existing = this.functions.get(handler);
      if (existing) return existing;
      const id = pascal(handler.replace(/\//g, '-'));
      const f = new nodejs.NodejsFunction(this, id, {
        entry: join(root, 'functions', `${handler}.ts`),
        handler: 'handler',
        runtime: lambda.Runtime.NODEJS_22_X,
        // arm64 where the bundle allows; the media worker ships x64 native sharp/ffmpeg builds, so it runs on x86_64.
        architecture: opts.nativeMedia ? lambda.Architecture.X86_64 : lambda.Architecture.ARM_64,
        memorySize: opts.memoryMb ?? 256,
        timeout: Duration.seconds(opts.timeoutSeconds ?? 10),
        tracing: lambda.Tracing.ACTIVE,
        logGroup: logGroupFor(handler),
        role: roleFor(handler),
        loggingFormat: lambda.LoggingFormat.JSON,
        environment,
        projectRoot: root,
        depsLockFilePath: join(root, 'package-lock.json'),
        bundling: {
          // The AWS SDK v3 is bundled (pinned by our lock file, tree-shaken, minified) rather than taken from the runtime.
          format: nodejs.OutputFormat.ESM,
          minify: bundling.minify,
          sourceMap: bundling.sourcemap,
          target: bundling.target,
          mainFields: bundling.mainFields,
          banner: bundling.banner,
          // Only the media worker carries sharp and ffmpeg: copied from the installed packages (no download at synth).
          externalModules: opts.nativeMedia ? bundling.nativeMediaModules : [],
          commandHooks: handler.startsWith('http/meta/') && props.openApiDocumentPath
            ? {
                beforeBundling: () => [],
                beforeInstall: () => [],
                afterBundling: (inputDir: string, outputDir: string) => [
                  `cp ${props.openApiDocumentPath} ${outputDir}/openapi.json`,
                  // The docs renderer's single-file browser bundle, served by GET /docs/scalar.js.
                  ...(handler === 'http/meta/docs-asset'
                    ? [`cp ${inputDir}/node_modules/@scalar/api-reference/dist/browser/standalone.js ${outputDir}/scalar.js`]
                    : []),
                ],
              }
            : opts.nativeMedia
            ? {
                beforeBundling: () => [],
                beforeInstall: () => [],
                afterBundling: (inputDir: string, outputDir: string) => [
                  `mkdir -p ${outputDir}/node_modules/@img ${outputDir}/node_modules/@ffmpeg-installer`,
                  `cp -r ${inputDir}/node_modules/sharp ${outputDir}/node_modules/`,
                  `cp -r ${inputDir}/node_modules/@img/. ${outputDir}/node_modules/@img/`,
                  `cp -r ${inputDir}/node_modules/detect-libc ${inputDir}/node_modules/semver ${outputDir}/node_modules/ 2>/dev/null || true`,
                  `cp -r ${inputDir}/node_modules/@ffmpeg-installer/ffmpeg ${inputDir}/node_modules/@ffmpeg-installer/linux-x64 ${outputDir}/node_modules/@ffmpeg-installer/`,
                ],
              }
            : undefined,
        },
      });
      this.functions.set(handler, f);
      return f;
    };

    // The HTTP API: one Lambda per handler module, one API route per row of the route table.
    const accessLogGroup = new logs.LogGroup(this, 'ApiAccessLogs', { retention: logs.RetentionDays.THREE_MONTHS, removalPolicy: RemovalPolicy.DESTROY });
    this.api = new apigw.HttpApi(this, 'Api', {
      description: 'WhatsApp Business messaging and CRM API',
      createDefaultStage: false,
    });
    const stage = this.api.addStage('DefaultStage', {
      stageName: '$default',
      autoDeploy: true,
      // A backstop behind the per-key limits enforced in the functions.
      throttle: { rateLimit: 500, burstLimit: 1000 },
    });
    const cfnStage = stage.node.defaultChild as apigw.CfnStage;
    cfnStage.accessLogSettings = {
      destinationArn: accessLogGroup.logGroupArn,
      format: JSON.stringify({
        requestId: '$context.requestId',
        ip: '$context.identity.sourceIp',
        requestTime: '$context.requestTime',
        routeKey: '$context.routeKey',
        status: '$context.status',
        latency: '$context.responseLatency',
        integrationError: '$context.integrationErrorMessage',
      }),
    };

    const apiIntegrations = new Map<string, integrations.HttpLambdaIntegration>();
    for (const route of routes) {
      const f = fn(route.handler, route);
      let integration = apiIntegrations.get(route.handler);
      if (!integration) {
        integration = new integrations.HttpLambdaIntegration(`${pascal(route.handler)}Integration`, f);
        apiIntegrations.set(route.handler, integration);
      }
      this.api.addRoutes({ path: route.path, methods: [route.method as apigw.HttpMethod], integration });
    }

    // Workers: SQS-triggered, reporting partial batch failures.
    for (const worker of workers) {
      const f = fn(worker.handler, worker);
      f.addEventSource(new sources.SqsEventSource(this.queues.get(worker.queue)!, {
        batchSize: worker.batchSize,
        reportBatchItemFailures: true,
        maxConcurrency: worker.queue === 'broadcasts' ? 2 : undefined,
      }));
    }

    // The outbox sweep: re-publishes events whose publish was lost (a function died after its commit).
    if (existsSync(join(root, 'functions', 'scheduled', 'outbox-sweep.ts'))) {
      const sweep = fn('scheduled/outbox-sweep', { timeoutSeconds: 60 });
      const sweepDlq = new sqs.Queue(this, 'OutboxSweepDlq', {
        retentionPeriod: Duration.days(14),
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
      });
      new events.Rule(this, 'OutboxSweepSchedule', {
        schedule: events.Schedule.rate(Duration.minutes(1)),
        targets: [new targets.LambdaFunction(sweep, { deadLetterQueue: sweepDlq, retryAttempts: 2 })],
      });
    }

    // Broadcast scheduling: EventBridge Scheduler invokes the broadcast queue at send_at.
    const schedulerRole = new iam.Role(this, 'BroadcastSchedulerRole', { assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com') });
    this.queues.get('broadcasts')?.grantSendMessages(schedulerRole);
    // The broadcast worker re-schedules a start that fires early, so it needs the same as create and cancel.
    for (const handler of ['http/broadcasts/create', 'http/broadcasts/cancel', 'workers/broadcast']) {
      const f = this.functions.get(handler);
      if (!f) continue;
      f.addEnvironment('BROADCAST_SCHEDULER_ROLE_ARN', schedulerRole.roleArn);
      f.addEnvironment('BROADCAST_QUEUE_ARN', this.queues.get('broadcasts')!.queueArn);
      f.addToRolePolicy(new iam.PolicyStatement({
        actions: ['scheduler:CreateSchedule', 'scheduler:UpdateSchedule', 'scheduler:DeleteSchedule'],
        resources: [`arn:${Aws.PARTITION}:scheduler:${Aws.REGION}:${Aws.ACCOUNT_ID}:schedule/default/broadcast-*`],
      }));
      f.addToRolePolicy(new iam.PolicyStatement({ actions: ['iam:PassRole'], resources: [schedulerRole.roleArn] }));
    }

    // The AI worker may call Amazon Bedrock (Converse) when a business chooses it.
    this.functions.get('workers/ai')?.addToRolePolicy(new iam.PolicyStatement({
      actions: ['bedrock:InvokeModel'],
      resources: [`arn:${Aws.PARTITION}:bedrock:${Aws.REGION}::foundation-model/*`],
    }));

    // Alarms: API 5xx rate (every HTTP function at once) and errors of each worker; DLQ depth alarms are above.
    new cloudwatch.Alarm(this, 'Api5xxAlarm', {
      alarmDescription: 'HTTP API answered 5xx',
      metric: new cloudwatch.Metric({
        namespace: 'AWS/ApiGateway',
        metricName: '5xx',
        dimensionsMap: { ApiId: this.api.apiId, Stage: '$default' },
        statistic: 'Sum',
        period: Duration.minutes(5),
      }),
      threshold: 5,
      evaluationPeriods: 1,
    });
    for (const worker of workers) {
      new cloudwatch.Alarm(this, `${pascal(worker.handler)}Errors`, {
        alarmDescription: `Errors in ${worker.handler}`,
        metric: this.functions.get(worker.handler)!.metricErrors({ period: Duration.minutes(5) }),
        threshold: 5,
        evaluationPeriods: 1,
      });
    }

    new CfnOutput(this, 'ApiUrl', { value: this.api.apiEndpoint });
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
    new CfnOutput(this, 'UpstreamSecretArn', { value: upstreamSecret.secretArn });
    new CfnOutput(this, 'UpstreamWebhookUrl', { value: `${this.api.apiEndpoint}/webhooks/upstream` });

    this.explainNagFindings(upstreamSecret, accessLogs);
  }

  /**
   * Every cdk-nag finding that stays carries its reason here (cdk-nag v3 acknowledges through CDK's own
   * Validations API; each finding id is acknowledged on its own).
   */
  private explainNagFindings(upstreamSecret: secretsmanager.Secret, accessLogs: s3.Bucket) {
    const stackWide: Record<string, string> = {
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]':
        'AWSLambdaBasicExecutionRole is the minimal managed policy for writing function logs.',
      'AwsSolutions-APIG4': 'Routes are authorized inside each function by API key (hashed, revocable, scoped) as the contract requires; the upstream webhook is authorized by its HMAC signature.',
      'AwsSolutions-L1': 'The contract fixes the runtime at nodejs22.x.',
      'Serverless-LambdaLatestVersion': 'The contract fixes the runtime at nodejs22.x.',
      'Serverless-LambdaDLQ': 'Functions are invoked synchronously (API Gateway) or by SQS event sources whose queues have their own DLQs; an async DLQ would never receive anything.',
      'Serverless-LambdaDefaultMemorySize': 'Memory is set per function in the route table; 256 MB is the measured need of the thin HTTP functions.',
      'Serverless-SQSRedrivePolicy': 'Dead-letter queues are the end of the redrive chain; they have no DLQ of their own.',
      'AwsSolutions-SQS3': 'Dead-letter queues are the end of the redrive chain; they have no DLQ of their own.',
      'Serverless-LambdaEventSourceMappingDestination':
        'SQS event sources do not support on-failure destinations; failed messages go to each queue\'s dead-letter queue through its redrive policy.',
      'AwsSolutions-IAM5[Resource::*]': 'X-Ray tracing (PutTraceSegments, PutTelemetryRecords) accepts no resource-level permission.',
      [`AwsSolutions-IAM5[Resource::<${this.getLogicalId(this.table.node.defaultChild as dynamodb.CfnGlobalTable)}.Arn>/index/*]`]:
        'Queries on the table\'s own indexes (gsi1, shard); the grant names no other table.',
      [`AwsSolutions-IAM5[Resource::<${this.getLogicalId(this.bucket.node.defaultChild as s3.CfnBucket)}.Arn>/*]`]:
        'Objects of the media bucket only.',
      'AwsSolutions-IAM5[Action::s3:Abort*]': 'CDK\'s read/write grant on the media bucket only (multipart uploads of large media).',
      'AwsSolutions-IAM5[Action::s3:DeleteObject*]': 'CDK\'s read/write grant on the media bucket only.',
      'AwsSolutions-IAM5[Action::s3:GetBucket*]': 'CDK\'s read/write grant on the media bucket only.',
      'AwsSolutions-IAM5[Action::s3:GetObject*]': 'CDK\'s read/write grant on the media bucket only.',
      'AwsSolutions-IAM5[Action::s3:List*]': 'CDK\'s read/write grant on the media bucket only.',
      'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:bedrock:<AWS::Region>::foundation-model/*]':
        'The business chooses the Bedrock model in its AI settings; only foundation models of this region.',
      'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/default/broadcast-*]':
        'One schedule per broadcast, created and deleted by the broadcast functions; limited to the broadcast- prefix.',
    };
    for (const [id, reason] of Object.entries(stackWide)) Validations.of(this).acknowledge({ id, reason });
    Validations.of(upstreamSecret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason: 'The WhatsApp access token and app secret are issued by Meta and rotated there; the business updates this secret.',
    });
    Validations.of(accessLogs).acknowledge({ id: 'AwsSolutions-S1', reason: 'This is the access-log bucket itself; logging it into itself would loop.' });
  }
}

const pascal = (s: string) => s.split(/[^A-Za-z0-9]+/).filter(Boolean).map((p) => p[0].toUpperCase() + p.slice(1)).join('');
export type { Worker };
