/**
 * CloudWatch metrics through Powertools Metrics (Embedded Metric Format: one JSON line on stdout per
 * record, turned into metrics by CloudWatch without any API call on the request path).
 *
 * Every record is flushed at once, so callers never need a `publishStoredMetrics()` at the end of an
 * invocation, and a metric is never lost to a crash later in the same request. Outside Lambda (local
 * stack, tests) nothing is printed unless POWERTOOLS_METRICS_DISABLED=false asks for it.
 */
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { config } from '#shared/config.ts';

export const NAMESPACE = 'WaCrmService';

const enabled = process.env.POWERTOOLS_METRICS_DISABLED !== undefined
  ? process.env.POWERTOOLS_METRICS_DISABLED === 'false'
  : Boolean(process.env.AWS_LAMBDA_FUNCTION_NAME);

/** Exported for tests (they read what it prints); service code uses the functions below. */
export const metrics = new Metrics({ namespace: NAMESPACE, serviceName: config.serviceName });

const record = (name: string, unit: (typeof MetricUnit)[keyof typeof MetricUnit], value: number, dimensions: Record<string, string>) => {
  if (!enabled) return;
  try {
    for (const [key, val] of Object.entries(dimensions)) if (val) metrics.addDimension(key, val);
    metrics.addMetric(name, unit, value);
    metrics.publishStoredMetrics();
  } catch {
    // A metric must never fail the request it describes.
  }
};

/** A message accepted upstream, by message type (text, image, template...). */
export const messageSent = (messageType: string) => record('MessagesSent', MetricUnit.Count, 1, { messageType });

/** A send the upstream rejected, by the upstream error code (131047, 132000...). */
export const messageFailed = (messageType: string, code: string | undefined) =>
  record('MessagesFailed', MetricUnit.Count, 1, { messageType, code: code || 'unknown' });

/**
 * An upstream webhook refused because the stack secret's appSecret is still a placeholder: the deployment is not
 * finished (the stack alarms on any of these).
 */
export const upstreamAppSecretPlaceholder = () => record('UpstreamAppSecretPlaceholder', MetricUnit.Count, 1, {});

/** One outbound webhook delivery attempt: delivered (2xx) or not. */
export const webhookDelivery = (outcome: 'delivered' | 'failed', event: string) =>
  record('WebhookDeliveries', MetricUnit.Count, 1, { outcome, event });

/** How long a queue message waited before a worker took it (SQS attribute ApproximateFirstReceiveTimestamp vs SentTimestamp). */
export const queueAge = (queue: string, ageMs: number) =>
  record('QueueMessageAge', MetricUnit.Milliseconds, Math.max(0, ageMs), { queue });

/** Convenience for SQS workers: records the age of every record of a batch from its attributes. */
export const recordQueueAges = (queue: string, records: { attributes?: { SentTimestamp?: string } }[], now = Date.now()) => {
  for (const r of records) {
    const sent = Number(r.attributes?.SentTimestamp);
    if (Number.isFinite(sent) && sent > 0) queueAge(queue, now - sent);
  }
};
