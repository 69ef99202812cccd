/**
 * Tunables, read once per container through shared/settings/env.ts, so that a plan, a deployment or a test changes
 * behaviour through the environment, never through code. A number or flag that does not parse is a
 * `ConfigurationError` when this module loads (the function's init fails and says which variable).
 *
 * Settings a function cannot work without (the table, the bucket, queue URLs, the broadcast scheduler's ARNs) are
 * not here: each is read with `requiredEnv` where it is used, when it is first needed, so that a function lacking
 * one fails its first request with a configuration error naming it.
 */
import { boolEnv, numberEnv, optionalEnv } from '#shared/settings/env.ts';

export const config = {
  /** Set for DynamoDB Local; unset in AWS. */
  dynamodbEndpoint: optionalEnv('DYNAMODB_ENDPOINT'),
  region: optionalEnv('AWS_REGION') ?? optionalEnv('AWS_DEFAULT_REGION') ?? 'us-east-1',
  /** Locally, the S3 emulator's endpoint. */
  s3Endpoint: optionalEnv('S3_ENDPOINT'),
  /** Upstream (WhatsApp Cloud API or the local sandbox). */
  upstreamBaseUrl: optionalEnv('UPSTREAM_BASE_URL') ?? 'https://graph.facebook.com',
  upstreamApiVersion: optionalEnv('UPSTREAM_API_VERSION') ?? 'v21.0',
  /** Upstream calls: per-attempt timeout, attempts for transient faults (5xx, 130429, timeouts), first backoff, messages per second per phone number. */
  upstreamTimeoutMs: numberEnv('UPSTREAM_TIMEOUT_MS', 8_000, { min: 1 }),
  upstreamMaxAttempts: numberEnv('UPSTREAM_MAX_ATTEMPTS', 3, { min: 1 }),
  upstreamRetryBaseMs: numberEnv('UPSTREAM_RETRY_BASE_MS', 250, { min: 0 }),
  upstreamMessagesPerSecond: numberEnv('UPSTREAM_MESSAGES_PER_SECOND', 80, { min: 1 }),
  /** Local mode allows loopback and private targets for media links and webhooks. */
  allowPrivateNetworkTargets: boolEnv('ALLOW_PRIVATE_TARGETS', false),
  /** Per-key limits, per minute. */
  limits: {
    requests: numberEnv('LIMIT_REQUESTS_PER_MINUTE', 100, { min: 1 }),
    messages: numberEnv('LIMIT_MESSAGES_PER_MINUTE', 1000, { min: 1 }),
    bulk: numberEnv('LIMIT_BULK_PER_MINUTE', 10, { min: 1 }),
  },
  /** How long a media send waits for the media worker before answering 202. */
  mediaWaitBudgetMs: numberEnv('MEDIA_WAIT_BUDGET_MS', 25_000, { min: 0 }),
  /** How long a live segment count may read the contact projection before answering countStale. */
  segmentCountBudgetMs: numberEnv('SEGMENT_COUNT_BUDGET_MS', 20_000, { min: 0 }),
  logLevel: optionalEnv('LOG_LEVEL') ?? 'INFO',
  serviceName: optionalEnv('SERVICE_NAME') ?? 'wa-crm',
} as const;

export type LimitClass = keyof typeof config.limits;
