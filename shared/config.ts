/**
 * Environment, read once per container. Every tunable the service has lives here so that a plan,
 * a deployment or a test changes behaviour through the environment, never through code.
 */
const env = process.env;

const int = (name: string, fallback: number): number => {
  const raw = env[name];
  const n = raw === undefined || raw === '' ? NaN : Number(raw);
  return Number.isFinite(n) ? n : fallback;
};

const bool = (name: string, fallback: boolean): boolean => {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  return raw === '1' || raw.toLowerCase() === 'true';
};

export const config = {
  /** The single DynamoDB table. */
  tableName: env.TABLE_NAME ?? 'wa-crm',
  /** Set for DynamoDB Local; unset in AWS. */
  dynamodbEndpoint: env.DYNAMODB_ENDPOINT || undefined,
  region: env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? 'us-east-1',
  /** Media bucket and, locally, the S3 emulator's endpoint. */
  mediaBucket: env.MEDIA_BUCKET ?? 'wa-crm-media',
  s3Endpoint: env.S3_ENDPOINT || undefined,
  /** Upstream (WhatsApp Cloud API or the local sandbox). */
  upstreamBaseUrl: env.UPSTREAM_BASE_URL ?? 'https://graph.facebook.com',
  upstreamApiVersion: env.UPSTREAM_API_VERSION ?? 'v21.0',
  /** Upstream calls: per-attempt timeout, attempts for transient faults (5xx, 130429, timeouts), first backoff, messages per second per phone number. */
  upstreamTimeoutMs: int('UPSTREAM_TIMEOUT_MS', 8_000),
  upstreamMaxAttempts: int('UPSTREAM_MAX_ATTEMPTS', 3),
  upstreamRetryBaseMs: int('UPSTREAM_RETRY_BASE_MS', 250),
  upstreamMessagesPerSecond: int('UPSTREAM_MESSAGES_PER_SECOND', 80),
  /** Queues: in-process when LOCAL_QUEUES=1, else SQS URLs from QUEUE_URL_<NAME>. */
  localQueues: bool('LOCAL_QUEUES', false),
  /** Local mode allows loopback and private targets for media links and webhooks. */
  allowPrivateNetworkTargets: bool('ALLOW_PRIVATE_TARGETS', false),
  /** Per-key limits, per minute. */
  limits: {
    requests: int('LIMIT_REQUESTS_PER_MINUTE', 100),
    messages: int('LIMIT_MESSAGES_PER_MINUTE', 1000),
    bulk: int('LIMIT_BULK_PER_MINUTE', 10),
  },
  /** How long a media send waits for the media worker before answering 202. */
  mediaWaitBudgetMs: int('MEDIA_WAIT_BUDGET_MS', 25_000),
  /** How long a live segment count may read the contact projection before answering countStale. */
  segmentCountBudgetMs: int('SEGMENT_COUNT_BUDGET_MS', 20_000),
  logLevel: env.LOG_LEVEL ?? 'INFO',
  serviceName: env.SERVICE_NAME ?? 'wa-crm',
} as const;

export type LimitClass = keyof typeof config.limits;

export const queueUrl = (name: string): string | undefined =>
  env[`QUEUE_URL_${name.toUpperCase().replace(/-/g, '_')}`];
