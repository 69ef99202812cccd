/**
 * The upstream-events worker: processes the webhook bodies `POST /webhooks/upstream` accepted. Each change is
 * routed to its business by `metadata.phone_number_id`; incoming messages are stored (shared/messages/inbound.ts),
 * statuses applied (shared/messages/status.ts), and customers' marketing preferences (`user_preferences`) set their
 * contacts' `opted_out` (shared/contacts/marketing-preferences.ts). A status for a wamid not stored yet (the send's own write
 * may still be in flight) fails the record so SQS delivers it again, once every other part of the record is done
 * (a repeat changes nothing they did); an old one is dropped, and so is one still
 * unknown at the queue's last receive (a status of a message this service never sent, e.g. from another app on the
 * same number: nothing to apply, and nothing for the dead-letter queue). Parts that are not Meta's shape (an `entry`,
 * `changes`, `messages` or `statuses` that is no list, an item that is no object, a status without an id) are
 * dropped with a warning: no receive would make them processable.
 */
import { recordQueueAges } from '#shared/metrics/metrics.ts';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { findBusinessByPhoneNumberId } from '#shared/business/repository.ts';
import { recordInbound } from '#shared/messages/inbound.ts';
import { applyStatus } from '#shared/messages/status.ts';
import { applyMarketingPreference } from '#shared/contacts/marketing-preferences.ts';
import { logger } from '#shared/log/logger.ts';
import { throwIfConfigurationError } from '#shared/queue/worker-failures.ts';
import { workers } from '#shared/routes.ts';
import { isObject } from '#shared/lang/is-object.ts';
import { parseStorableJson } from '#shared/lang/client-keys.ts';

/** How long an unknown wamid is waited for before its status is dropped. */
const UNKNOWN_WAMID_PATIENCE_MS = 5 * 60 * 1000;
/** Receives of one message before SQS moves it to the dead-letter queue (the queue's redrive policy). */
const MAX_RECEIVES = workers.find((w) => w.queue === 'upstream-events')!.maxReceiveCount;

class NotYetKnown extends Error {}

/**
 * A status that overtook its send's settle (a moment apart) is looked for again a few times here before its record is
 * handed back to the queue, whose redelivery in AWS comes only after the visibility timeout (minutes).
 */
const UNKNOWN_RECHECKS_MS = [100, 300, 600];

async function applyStatusSoon(businessId: string, status: Record<string, any>): Promise<Awaited<ReturnType<typeof applyStatus>>> {
  let outcome = await applyStatus(businessId, status);
  const fresh = Date.now() - Number(status.timestamp ?? 0) * 1000 < UNKNOWN_WAMID_PATIENCE_MS;
  for (const ms of fresh ? UNKNOWN_RECHECKS_MS : []) {
    if (outcome !== 'unknown') break;
    await new Promise((resolve) => setTimeout(resolve, ms));
    outcome = await applyStatus(businessId, status);
  }
  return outcome;
}

/** The items of a part of the body that Meta sends as a list; anything else is dropped with a warning. */
function listOf(value: unknown, part: string, messageId: string): any[] {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value)) return value;
  logger.warn('upstream event part that is not a list dropped', { part, messageId });
  return [];
}

async function processRecord(record: SQSRecord): Promise<void> {
  let payload: Record<string, any>;
  try {
    payload = parseStorableJson(record.body) as Record<string, any>;
  } catch {
    logger.warn('upstream event that is not JSON dropped', { messageId: record.messageId });
    return;
  }
  const { messageId } = record;
  // When the notification came in (its enqueue by the receive endpoint): one moment for all its messages, so that the
  // messages of one second keep their order however long the worker takes over them.
  const sent = Number(record.attributes?.SentTimestamp);
  const arrived = Number.isFinite(sent) && sent > 0 ? sent : Date.now();
  const lastReceive = Number(record.attributes?.ApproximateReceiveCount ?? 1) >= MAX_RECEIVES;
  let waiting: NotYetKnown | undefined;
  for (const entry of listOf(payload.entry, 'entry', messageId)) {
    for (const change of listOf(entry?.changes, 'changes', messageId)) {
      if ((change?.field !== 'messages' && change?.field !== 'user_preferences') || !isObject(change.value)) continue;
      const value = change.value;
      const phoneNumberId = String(value.metadata?.phone_number_id ?? '');
      const businessId = phoneNumberId ? await findBusinessByPhoneNumberId(phoneNumberId) : undefined;
      if (!businessId) {
        logger.warn('upstream event for an unknown phone number id dropped', { phoneNumberId });
        continue;
      }
      if (change.field === 'user_preferences') {
        for (const preference of listOf(value.user_preferences, 'user_preferences', messageId)) {
          if (isObject(preference)) await applyMarketingPreference(businessId, preference);
        }
        continue;
      }
      for (const message of listOf(value.messages, 'messages', messageId)) {
        if (isObject(message)) await recordInbound(businessId, value, message, arrived);
        else logger.warn('upstream message that is not an object dropped', { messageId });
      }
      for (const status of listOf(value.statuses, 'statuses', messageId)) {
        if (!isObject(status) || typeof status.id !== 'string' || !status.id) {
          logger.warn('upstream status without a message id dropped', { messageId });
          continue;
        }
        if ((await applyStatusSoon(businessId, status)) !== 'unknown') continue;
        const age = Date.now() - Number(status.timestamp ?? 0) * 1000;
        if (age < UNKNOWN_WAMID_PATIENCE_MS && !lastReceive) {
          waiting ??= new NotYetKnown(`status for unknown wamid ${status.id}`);
          continue;
        }
        logger.warn('status for a wamid this service does not know dropped', { wamid: status.id, status: status.status, ageMs: age });
      }
    }
  }
  if (waiting) throw waiting;
}

export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
  recordQueueAges('upstream-events', event.Records);
  const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
  for (const record of event.Records) {
    try {
      await processRecord(record);
    } catch (err) {
      throwIfConfigurationError(err);
      if (!(err instanceof NotYetKnown)) logger.error('upstream event failed', { messageId: record.messageId, error: err as Error });
      batchItemFailures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures };
};
