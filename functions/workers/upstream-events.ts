/**
 * The upstream-events worker: processes the webhook bodies `POST /webhooks/upstream` accepted. Each change is
 * routed to its business by `metadata.phone_number_id`; incoming messages are stored (shared/messages/inbound.ts)
 * and statuses applied (shared/messages/status.ts). A status for a wamid not stored yet (the send's own write
 * may still be in flight) fails the record so SQS delivers it again; an old one is dropped.
 */
import { recordQueueAges } from '#shared/metrics/metrics.ts';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { findBusinessByPhoneNumberId } from '#shared/business/repository.ts';
import { recordInbound } from '#shared/messages/inbound.ts';
import { applyStatus } from '#shared/messages/status.ts';
import { logger } from '#shared/log/logger.ts';
import { throwIfConfigurationError } from '#shared/queue/worker-failures.ts';

/** How long an unknown wamid is waited for before its status is dropped. */
const UNKNOWN_WAMID_PATIENCE_MS = 5 * 60 * 1000;

class NotYetKnown extends Error {}

async function processRecord(record: SQSRecord): Promise<void> {
  let payload: Record<string, any>;
  try {
    payload = JSON.parse(record.body);
  } catch {
    logger.warn('upstream event that is not JSON dropped', { messageId: record.messageId });
    return;
  }
  for (const entry of payload.entry ?? []) {
    for (const change of entry.changes ?? []) {
      const value = change?.value;
      if (change?.field !== 'messages' || !value) continue;
      const phoneNumberId = String(value.metadata?.phone_number_id ?? '');
      const businessId = phoneNumberId ? await findBusinessByPhoneNumberId(phoneNumberId) : undefined;
      if (!businessId) {
        logger.warn('upstream event for an unknown phone number id dropped', { phoneNumberId });
        continue;
      }
      for (const message of value.messages ?? []) await recordInbound(businessId, value, message);
      for (const status of value.statuses ?? []) {
        const outcome = await applyStatus(businessId, status);
        const age = Date.now() - Number(status.timestamp ?? 0) * 1000;
        if (outcome === 'unknown' && age < UNKNOWN_WAMID_PATIENCE_MS) throw new NotYetKnown(`status for unknown wamid ${status.id}`);
      }
    }
  }
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
