/**
 * `POST /messages/v1/{id}/retry`: a failed message is sent again with its stored recipient, type, content and
 * metadata. Success moves it to `sent` (with `retriedAt`); a failure that still holds keeps it `failed` and
 * answers 400 `retry_failed` with the upstream code and the action required.
 */
import { missingRecord } from '#shared/auth/ownership.ts';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ApiError, badRequest, notFound } from '#shared/http/errors.ts';
import { newEvent } from '#shared/events/outbox.ts';
import { commitWithRetry } from './transact.ts';
import { db, table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';
import { sendMessage as upstreamSend, UpstreamError } from '#shared/upstream/client.ts';
import { toDeliveryError } from '#shared/upstream/error-codes.ts';
import { getConversation, conversationTouch } from '#shared/conversations/repository.ts';
import { recordContactActivity } from '#shared/contacts/repository.ts';
import { logger } from '#shared/log/logger.ts';
import { getMessage, wamidPut } from './repository.ts';
import { eventData } from './events.ts';
import { requirePhoneNumber } from './send.ts';

export interface RetryResult {
  message: string;
  data: { id: string; messageId: string; status: 'sent'; retriedAt: string };
}

export async function retryMessage(businessId: string, id: string): Promise<RetryResult> {
  const message = await getMessage(businessId, id);
  if (!message) throw await missingRecord('message', id, businessId, notFound(`Message ${id} not found`));
  if (message.direction !== 'outbound') throw notFound(`Message ${id} not found`);
  if (message.status !== 'failed') {
    throw badRequest('invalid_state', `Only failed messages can be retried; this message is ${message.status}`, { data: { id, status: message.status } });
  }
  const { phoneNumberId } = await requirePhoneNumber(businessId);
  const attemptAt = new Date().toISOString();
  const key = keys.message(businessId, id);

  let result;
  try {
    result = await upstreamSend(businessId, phoneNumberId, message.payload);
  } catch (err) {
    if (!(err instanceof UpstreamError)) throw err;
    const t = message.payload.template as { name?: string; language?: { code?: string } } | undefined;
    const failure = toDeliveryError(err, { templateName: t?.name, language: t?.language?.code });
    const error = { code: failure.code, error: failure.error, message: failure.message, ...(failure.details ? { details: failure.details } : {}) };
    await db.send(new UpdateCommand({
      TableName: table(),
      Key: key,
      UpdateExpression: 'SET #error = :error, lastRetryAt = :at, updatedAt = :at ADD retryCount :one',
      ExpressionAttributeNames: { '#error': 'error' },
      ExpressionAttributeValues: { ':error': error, ':at': attemptAt, ':one': 1 },
    }));
    throw new ApiError(400, {
      error: 'retry_failed',
      message: `The retry failed: ${failure.message}`,
      code: failure.code,
      action_required: failure.action_required,
      instructions: failure.instructions,
      ...(failure.details ? { details: failure.details } : {}),
      data: { id, status: 'failed' },
    });
  }

  const retriedAt = new Date().toISOString();
  const sent = { ...message, status: 'sent' as const, wamid: result.wamid, retriedAt, sentAt: retriedAt, updatedAt: retriedAt, error: null };
  const conversation = await getConversation(businessId, message.conversationId);
  try {
    await commitWithRetry(
      [
        {
          Update: {
            TableName: table(),
            Key: key,
            UpdateExpression: 'SET #status = :sent, wamid = :wamid, retriedAt = :at, sentAt = :at, updatedAt = :at, #error = :null, waId = :waId ADD retryCount :one',
            // Two concurrent retries: only one moves the message out of failed.
            ConditionExpression: '#status = :failed',
            ExpressionAttributeNames: { '#status': 'status', '#error': 'error' },
            ExpressionAttributeValues: { ':sent': 'sent', ':failed': 'failed', ':wamid': result.wamid, ':at': retriedAt, ':null': null, ':one': 1, ':waId': result.waId || message.waId },
          },
        },
        wamidPut(result.wamid, businessId, id),
        ...(conversation ? [conversationTouch(conversation, { at: retriedAt, direction: 'outbound' })] : []),
      ],
      [newEvent(businessId, 'message.sent', eventData(sent, { sent_by: message.sentBy ?? 'api', sent_at: retriedAt, retried_at: retriedAt, content: message.content }))],
    );
  } catch (err) {
    if ((err as Error)?.name === 'TransactionCanceledException') throw badRequest('invalid_state', 'The message was retried concurrently and is no longer failed', { data: { id } });
    throw err;
  }
  await recordContactActivity(businessId, message.contactId, retriedAt).catch((err) => logger.warn('contact activity not recorded', { error: err as Error }));
  return { message: 'Message sent successfully', data: { id, messageId: result.wamid, status: 'sent', retriedAt } };
}
