/**
 * The deployed service, composed from one module per concern:
 * - infra/resources.ts: the table, the media bucket, the upstream secret, a queue (with its DLQ) per worker;
 * - infra/functions.ts: one Lambda per handler module, with the settings and grants its code needs (infra/needs.ts);
 * - infra/api.ts: the HTTP API (a route per row of shared/routes.ts, `$default` → 404/405);
 * - infra/scheduling.ts: the scheduled functions (the outbox sweep) and the broadcast scheduler's role;
 * - infra/nag.ts: the reasons for the cdk-nag findings that stay.
 * Adding an endpoint is a row in shared/routes.ts and a handler file.
 */
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import {
  CfnOutput,
  Duration,
  Stack,
  type StackProps,
  aws_apigatewayv2 as apigw,
  aws_cloudwatch as cloudwatch,
  aws_dynamodb as dynamodb,
  aws_lambda as lambda,
  aws_lambda_event_sources as sources,
  aws_s3 as s3,
  aws_sqs as sqs,
} from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { workers } from '../shared/routes.ts';
import { createResources, type ServiceResources } from './resources.ts';
import { createFunctions, NOT_FOUND_HANDLER } from './functions.ts';
import type { FunctionNeeds } from './needs.ts';
import { createApi } from './api.ts';
import { createBroadcastSchedulerRole, scheduleFunctions } from './scheduling.ts';
import { acknowledgeNagFindings } from './nag.ts';
import { pascal, queueUrlSetting } from './names.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Bedrock foundation models a business may choose for its AI agent (the first is the default); only these are
 * granted. Small, inexpensive models: the operator pays for every reply.
 */
export const DEFAULT_AI_MODELS = ['amazon.nova-lite-v1:0', 'amazon.nova-micro-v1:0'];

export interface ServiceStackProps extends StackProps {
  /** Upstream API version, e.g. v21.0. */
  upstreamApiVersion?: string;
  /** Per-key limits (per minute); a plan may change them. */
  limits?: { requests?: number; messages?: number; bulk?: number };
  /** Bedrock model ids a business may choose (default: DEFAULT_AI_MODELS); the first is the default model. */
  aiModels?: string[];
  /** The OpenAPI document generated at synth time (infra/openapi-document.ts), shipped beside the meta functions' bundles. */
  openApiDocumentPath: string;
}

export class ServiceStack extends Stack {
  readonly table: dynamodb.TableV2;
  readonly bucket: s3.Bucket;
  readonly api: apigw.HttpApi;
  readonly resources: ServiceResources;
  readonly functions: Map<string, lambda.Function>;
  /** What each function's code needs (infra/needs.ts): the upper bound of its settings and grants. */
  readonly needs: Map<string, FunctionNeeds>;
  readonly queues: Map<string, sqs.Queue>;
  readonly aiModels: string[];
  readonly businessSecretsPrefix: string;

  constructor(scope: Construct, id: string, props: ServiceStackProps) {
    super(scope, id, props);
    this.resources = createResources(this);
    ({ table: this.table, bucket: this.bucket, queues: this.queues } = this.resources);
    this.aiModels = props.aiModels?.length ? props.aiModels : DEFAULT_AI_MODELS;
    this.businessSecretsPrefix = `${this.stackName}/business-token/`;
    const broadcastQueue = this.queues.get('broadcasts')!;
    const schedulerRole = createBroadcastSchedulerRole(this, broadcastQueue);

    // Every value the stack can give a function; each function receives those its code reads (infra/functions.ts).
    const settings: Record<string, string> = {
      TABLE_NAME: this.table.tableName,
      MEDIA_BUCKET: this.bucket.bucketName,
      UPSTREAM_SECRET_ARN: this.resources.upstreamSecret.secretArn,
      BUSINESS_TOKEN_SECRET_PREFIX: this.businessSecretsPrefix,
      UPSTREAM_API_VERSION: props.upstreamApiVersion ?? 'v21.0',
      ALLOW_PRIVATE_TARGETS: 'false',
      LIMIT_REQUESTS_PER_MINUTE: String(props.limits?.requests ?? 100),
      LIMIT_MESSAGES_PER_MINUTE: String(props.limits?.messages ?? 1000),
      LIMIT_BULK_PER_MINUTE: String(props.limits?.bulk ?? 10),
      BROADCAST_QUEUE_ARN: broadcastQueue.queueArn,
      BROADCAST_SCHEDULER_ROLE_ARN: schedulerRole.roleArn,
      AI_PROVIDER: 'bedrock',
      AI_MODEL: this.aiModels[0],
      AI_ALLOWED_MODELS: this.aiModels.join(','),
      ...Object.fromEntries([...this.queues].map(([name, queue]) => [queueUrlSetting(name), queue.queueUrl])),
    };

    ({ functions: this.functions, needs: this.needs } = createFunctions(this, {
      root,
      resources: this.resources,
      settings,
      schedulerRole,
      businessSecretsPrefix: this.businessSecretsPrefix,
      aiModels: this.aiModels,
      openApiDocumentPath: props.openApiDocumentPath,
    }));

    this.api = createApi(this, this.functions, this.functions.get(NOT_FOUND_HANDLER)!);

    // Workers: SQS-triggered, reporting partial batch failures.
    for (const worker of workers) {
      this.functions.get(worker.handler)!.addEventSource(new sources.SqsEventSource(this.queues.get(worker.queue)!, {
        batchSize: worker.batchSize,
        reportBatchItemFailures: true,
        maxConcurrency: worker.maxConcurrency,
      }));
    }
    scheduleFunctions(this, this.functions);

    // Alarms: API 5xx rate (every HTTP function at once) and errors of each worker; DLQ depth alarms are with the queues.
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
    new CfnOutput(this, 'UpstreamSecretArn', { value: this.resources.upstreamSecret.secretArn });
    new CfnOutput(this, 'BusinessTokenSecretPrefix', { value: this.businessSecretsPrefix });
    new CfnOutput(this, 'UpstreamWebhookUrl', { value: `${this.api.apiEndpoint}/webhooks/upstream` });

    acknowledgeNagFindings(this, this.resources, this.businessSecretsPrefix, this.aiModels);
  }
}
