/**
 * The sending port: one personalised template request through the messaging service (the same path as
 * `POST /messages/v1`, so every message is stored, counted and emits its own message events).
 *
 * Each recipient's send carries the idempotency key `broadcast:{broadcastId}:{contactId}`: when a worker dies
 * between sending and recording, the next attempt gets the first outcome back instead of a second message. Each is
 * recorded under the condition that the broadcast has not been cancelled (its stop marker, written by the cancel).
 */
import { sendMessage } from '#shared/messages/send.ts';
import { table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';

/** The broadcast was cancelled before this recipient's message was recorded: nothing was sent. */
export class BroadcastStopped extends Error {
  constructor(readonly broadcastId: string) {
    super(`broadcast ${broadcastId} was cancelled before this message was recorded`);
    this.name = 'BroadcastStopped';
  }
}

export interface Sent {
  messageId: string | null;
  wamid: string | null;
}

export async function sendTemplate(businessId: string, broadcastId: string, contactId: string, request: Record<string, unknown>): Promise<Sent> {
  const res = await sendMessage(businessId, request, {
    sentBy: 'broadcast',
    broadcastId,
    idempotencyKey: `broadcast:${broadcastId}:${contactId}`,
    // Recorded (and so sent) only while the broadcast has no stop marker: a cancel's answer stops every send after it.
    recordIf: {
      items: [{ ConditionCheck: { TableName: table(), Key: keys.broadcastStop(businessId, broadcastId), ConditionExpression: 'attribute_not_exists(pk)' } }],
      refused: () => new BroadcastStopped(broadcastId),
    },
  });
  return { messageId: res.data?.id ?? res.messages?.[0]?.id ?? null, wamid: res.messages?.[0]?.wamid ?? null };
}
