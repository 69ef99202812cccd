/**
 * Read receipts and the typing indicator (the Cloud API's `{ messaging_product, status: 'read', message_id,
 * typing_indicator? }` on the messages endpoint): a customer's message is marked read upstream, the typing
 * indicator shown when asked (it stays until the next message or 25 s), and the time kept on the message.
 */
import * as v from 'valibot';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';
import { notFound, validationError } from '#shared/http/errors.ts';
import { toFieldErrors, summarize } from '#shared/http/validation.ts';
import { markRead as upstreamMarkRead } from '#shared/upstream/client.ts';
import { identifier } from './schema/fields.ts';
import { findByWamid, getMessage } from './repository.ts';
import { requirePhoneNumber } from './send-route.ts';

const receipt = v.looseObject({
  messaging_product: v.literal('whatsapp', 'messaging_product must be "whatsapp"'),
  status: v.literal('read', 'status must be "read"'),
  message_id: identifier('message_id', 256),
  typing_indicator: v.optional(v.looseObject({ type: v.literal('text', 'typing_indicator.type must be "text"') }, 'typing_indicator must be { type: "text" }')),
});

/** A body that asks for a read receipt rather than a message (the Cloud API tells them apart by `status`). */
export const isReadReceipt = (body: unknown): boolean =>
  typeof body === 'object' && body !== null && (body as { status?: unknown }).status !== undefined && (body as { type?: unknown }).type === undefined;

/** The inbound message a receipt names: by its wamid or by the service's message id. */
async function inboundMessage(businessId: string, id: string) {
  const pointer = await findByWamid(businessId, id);
  const message = await getMessage(businessId, pointer?.messageId ?? id);
  if (!message || message.direction !== 'inbound' || !message.wamid) throw notFound(`No message received by this business has the id ${id}`);
  return message;
}

export async function markRead(businessId: string, body: unknown): Promise<{ success: true }> {
  const parsed = v.safeParse(receipt, body);
  if (!parsed.success) {
    const details = toFieldErrors(parsed.issues);
    throw validationError(details, `Invalid read receipt: ${summarize(details)}`);
  }
  const { message_id, typing_indicator } = parsed.output;
  const message = await inboundMessage(businessId, message_id);
  const { phoneNumberId } = await requirePhoneNumber(businessId);
  await upstreamMarkRead(businessId, phoneNumberId, { messaging_product: 'whatsapp', status: 'read', message_id: message.wamid!, ...(typing_indicator ? { typing_indicator } : {}) });
  const now = new Date().toISOString();
  await db.send(new UpdateCommand({
    TableName: table(),
    Key: keys.message(businessId, message.id),
    UpdateExpression: typing_indicator ? 'SET markedReadAt = if_not_exists(markedReadAt, :now), typingShownAt = :now' : 'SET markedReadAt = if_not_exists(markedReadAt, :now)',
    ConditionExpression: 'attribute_exists(pk)',
    ExpressionAttributeValues: { ':now': now },
  }));
  return { success: true };
}
