/**
 * The stateful resources the functions use: the single table, the media bucket (and its access-log bucket),
 * the upstream credentials secret, and one SQS queue with its dead-letter queue (and an alarm on it) per worker.
 */
import {
  Duration,
  RemovalPolicy,
  aws_cloudwatch as cloudwatch,
  aws_dynamodb as dynamodb,
  aws_s3 as s3,
  aws_secretsmanager as secretsmanager,
  aws_sqs as sqs,
} from 'aws-cdk-lib';
import type { Stack } from 'aws-cdk-lib';
import { workers } from '../shared/routes.ts';
import { tableDefinition } from './table.ts';
import { pascal } from './names.ts';

/** The marker the code reads as "no stack-wide access token yet" (the operator sets Meta's token after deploy). */
export const UNSET_TOKEN = 'set-me';

export interface ServiceResources {
  table: dynamodb.TableV2;
  bucket: s3.Bucket;
  accessLogs: s3.Bucket;
  upstreamSecret: secretsmanager.Secret;
  /** Where the initial random verify token comes from (Secrets Manager generates one random key per secret). */
  verifyTokenSeed: secretsmanager.Secret;
  /** Each worker's queue, by queue name. */
  queues: Map<string, sqs.Queue>;
}

/** Created directly in the stack (not in a nested construct), so that their logical ids stay those of earlier deployments. */
export function createResources(scope: Stack): ServiceResources {
  // The single table: on-demand, point-in-time recovery, TTL for short-lived items, kept on stack deletion.
  const table = new dynamodb.TableV2(scope, 'Table', {
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
  const accessLogs = new s3.Bucket(scope, 'AccessLogs', {
    encryption: s3.BucketEncryption.S3_MANAGED,
    blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
    enforceSSL: true,
    lifecycleRules: [{ expiration: Duration.days(90) }],
    removalPolicy: RemovalPolicy.RETAIN,
  });
  const bucket = new s3.Bucket(scope, 'Media', {
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

  // Upstream credentials. No usable placeholder: the app secret and the verify token are random at deploy (an
  // unedited stack accepts no webhook signed with a public value); the access token is the marker the code reads
  // as unset until the operator puts Meta's values in (README, deploy steps).
  const verifyTokenSeed = new secretsmanager.Secret(scope, 'UpstreamVerifyTokenSeed', {
    description: 'The random initial webhook verify token copied into UpstreamCredentials at creation; not read by the service',
    generateSecretString: { passwordLength: 48, excludePunctuation: true },
  });
  const upstreamSecret = new secretsmanager.Secret(scope, 'UpstreamCredentials', {
    description: 'WhatsApp Cloud API credentials: {"token":"...","appSecret":"...","verifyToken":"..."}',
    generateSecretString: {
      secretStringTemplate: JSON.stringify({ token: UNSET_TOKEN, verifyToken: verifyTokenSeed.secretValue.unsafeUnwrap() }),
      generateStringKey: 'appSecret',
      passwordLength: 64,
      excludePunctuation: true,
    },
  });

  const queues = new Map<string, sqs.Queue>();
  // Queues with dead-letter queues; the visibility timeout covers the worker's own timeout.
  for (const worker of workers) {
    const dlq = new sqs.Queue(scope, `${pascal(worker.queue)}Dlq`, {
      retentionPeriod: Duration.days(14),
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    const queue = new sqs.Queue(scope, `${pascal(worker.queue)}Queue`, {
      visibilityTimeout: Duration.seconds(Math.max(worker.visibilityTimeoutSeconds, 6 * worker.timeoutSeconds)),
      retentionPeriod: Duration.days(4),
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      deadLetterQueue: { queue: dlq, maxReceiveCount: worker.maxReceiveCount },
    });
    queues.set(worker.queue, queue);
    new cloudwatch.Alarm(scope, `${pascal(worker.queue)}DlqAlarm`, {
      alarmDescription: `Messages in the ${worker.queue} dead-letter queue`,
      metric: dlq.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5) }),
      threshold: 1,
      evaluationPeriods: 1,
    });
  }
  return { table, bucket, accessLogs, upstreamSecret, verifyTokenSeed, queues };
}
