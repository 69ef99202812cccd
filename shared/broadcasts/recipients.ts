/**
 * Broadcast recipients in the table.
 *
 * - `B#{bid}#BCAST#{id}` / `R#{contactId}`: one recipient. While it waits to be sent it sits in a sparse gsi1 queue
 *   in audience order; once sent, gsi1 points from the service message id back to it (status webhooks).
 *   A worker claims it (pending → sending under a lease) before sending and settles it under that claim.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { applied, isConditionFailure } from '#shared/store/conditional.ts';
import { keys } from '#shared/store/keys.ts';
import { batchWriteAll } from '#shared/store/batch.ts';
import { queryIndexPage, queryListPage } from '#shared/store/query.ts';
import type { Recipient, RecipientState, SkipReason } from './model.ts';

const toRecipient = (item: Record<string, any>): Recipient => ({
  broadcast_id: item.broadcast_id,
  contact_id: item.contact_id,
  seq: Number(item.seq ?? 0),
  state: item.state,
  phone_number: item.phone_number ?? null,
  request: item.send_request,
  reason: item.reason ?? null,
  message_id: item.message_id ?? null,
  wamid: item.wamid ?? null,
  error: item.error ?? null,
  delivery_status: item.delivery_status ?? null,
  sent_at: item.sent_at ?? null,
  delivered_at: item.delivered_at ?? null,
  read_at: item.read_at ?? null,
  failed_at: item.failed_at ?? null,
  lease_until: item.lease_until,
  lease: item.lease,
});

export interface NewRecipient {
  contact_id: string;
  seq: number;
  state: Extract<RecipientState, 'pending' | 'skipped'>;
  phone_number: string | null;
  request?: Record<string, unknown>;
  reason?: string;
}

/**
 * Writes the frozen audience. Plain BatchWrite (no conditions) is safe: nothing sends before the broadcast is
 * marked frozen, so a retried freeze only rewrites identical pending items.
 */
export async function putRecipients(businessId: string, broadcastId: string, recipients: NewRecipient[]): Promise<void> {
  await batchWriteAll(recipients.map((r) => ({
    PutRequest: {
      Item: {
        ...keys.broadcastRecipient(businessId, broadcastId, r.contact_id),
        ...(r.state === 'pending' ? keys.broadcastQueue(businessId, broadcastId, r.seq) : {}),
        type: 'broadcastRecipient',
        broadcast_id: broadcastId,
        contact_id: r.contact_id,
        seq: r.seq,
        state: r.state,
        phone_number: r.phone_number,
        ...(r.request ? { send_request: r.request } : {}),
        ...(r.reason ? { reason: r.reason } : {}),
      },
    },
  })), { concurrency: 8 });
}

/** Removes recipients a start froze for a broadcast cancelled before it started (none of them was ever sent to). */
export async function deleteRecipients(businessId: string, broadcastId: string, contactIds: string[]): Promise<void> {
  await batchWriteAll(contactIds.map((contactId) => ({ DeleteRequest: { Key: keys.broadcastRecipient(businessId, broadcastId, contactId) } })), { concurrency: 8 });
}

/** The head of the send queue: recipients pending or claimed, in audience order (gsi1, eventually consistent). */
export async function queueHead(businessId: string, broadcastId: string, limit: number): Promise<Recipient[]> {
  const { items } = await queryIndexPage(keys.broadcastQueuePk(businessId, broadcastId), { limit });
  return items.map(toRecipient);
}

export const recipientKey = (businessId: string, broadcastId: string, contactId: string) => keys.broadcastRecipient(businessId, broadcastId, contactId);

/**
 * pending → sending under `lease`, so that no other worker sends to this recipient; with `expiredLease`, takes
 * over a claim whose worker died. Undefined when someone else has it.
 */
export async function claimRecipient(
  businessId: string, broadcastId: string, contactId: string, lease: string, leaseUntil: number, expiredLease?: string,
): Promise<Recipient | undefined> {
  try {
    const { Attributes } = await db.send(new UpdateCommand({
      TableName: table(),
      Key: recipientKey(businessId, broadcastId, contactId),
      UpdateExpression: 'SET #state = :sending, lease = :lease, lease_until = :until',
      ConditionExpression: expiredLease ? '#state = :sending AND lease = :old' : '#state = :pending',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: {
        ':sending': 'sending', ':lease': lease, ':until': leaseUntil, ...(expiredLease ? { ':old': expiredLease } : { ':pending': 'pending' }),
      },
      ReturnValues: 'ALL_NEW',
    }));
    return Attributes ? toRecipient(Attributes) : undefined;
  } catch (err) {
    if (isConditionFailure(err)) return undefined;
    throw err;
  }
}

export type Outcome =
  /** With the number it went to, when the contact's number changed since the audience was frozen. */
  | { state: 'sent'; message_id: string | null; wamid: string | null; phone_number?: string }
  | { state: 'failed'; message_id: string | null; error: { error: string; code?: string; message: string }; phone_number?: string }
  | { state: 'cancelled'; reason: string }
  /** Deleted, opted out or left without a number since the audience was frozen: not sent to. */
  | { state: 'skipped'; reason: SkipReason }
  /** Back to the queue; with the message a throttled send left failed (and its number), which the next turn retries. */
  | { state: 'pending'; message_id?: string | null; phone_number?: string };

/**
 * Records what happened to a claimed recipient (only under the claim `lease`, or any claim when `lease` is
 * undefined and `fromStates` says so). Leaves the send queue unless it goes back to pending.
 */
export async function settleRecipient(
  businessId: string, broadcastId: string, contactId: string, outcome: Outcome, lease: string | undefined, fromStates: RecipientState[] = ['sending'],
): Promise<boolean> {
  const now = new Date().toISOString();
  const names: Record<string, string> = { '#state': 'state' };
  const values: Record<string, unknown> = { ':to': outcome.state };
  const set = ['#state = :to'];
  let remove = ['lease', 'lease_until'];
  // A recipient with a service message id is found from it by the status webhooks (gsi1); the send request is done with.
  const pointToMessage = (messageId: string | null | undefined) => {
    if (messageId) {
      const g = keys.broadcastMessage(businessId, messageId);
      Object.assign(values, { ':g1': g.gsi1pk, ':g2': g.gsi1sk });
      set.push('gsi1pk = :g1', 'gsi1sk = :g2');
    } else remove.push('gsi1pk', 'gsi1sk');
    remove.push('send_request');
  };
  if (outcome.state === 'sent') {
    Object.assign(values, { ':mid': outcome.message_id, ':wamid': outcome.wamid, ':at': now });
    set.push('message_id = :mid', 'wamid = :wamid', 'sent_at = :at');
    pointToMessage(outcome.message_id);
  } else if (outcome.state === 'failed') {
    Object.assign(values, { ':mid': outcome.message_id, ':err': outcome.error, ':at': now });
    set.push('message_id = :mid', '#error = :err', 'failed_at = :at');
    names['#error'] = 'error';
    pointToMessage(outcome.message_id);
  } else if (outcome.state === 'cancelled' || outcome.state === 'skipped') {
    Object.assign(values, { ':reason': outcome.reason });
    set.push('#reason = :reason');
    names['#reason'] = 'reason';
    remove.push('gsi1pk', 'gsi1sk', 'send_request');
  } else {
    remove = ['lease', 'lease_until'];
    if (outcome.message_id) {
      values[':mid'] = outcome.message_id;
      set.push('message_id = :mid');
    }
  }
  // The number the recipient's message went (or is to go) to, when the contact's changed since the audience was frozen.
  if ((outcome.state === 'sent' || outcome.state === 'failed' || outcome.state === 'pending') && outcome.phone_number) {
    values[':phone'] = outcome.phone_number;
    set.push('phone_number = :phone');
  }
  fromStates.forEach((s, i) => { values[`:from${i}`] = s; });
  let condition = `#state IN (${fromStates.map((_, i) => `:from${i}`).join(', ')})`;
  if (lease !== undefined) {
    values[':lease'] = lease;
    condition += ' AND lease = :lease';
  }
  return applied(db.send(new UpdateCommand({
    TableName: table(),
    Key: recipientKey(businessId, broadcastId, contactId),
    UpdateExpression: `SET ${set.join(', ')} REMOVE ${remove.join(', ')}`,
    ConditionExpression: condition,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  })));
}
export async function listRecipients(
  businessId: string, broadcastId: string, limit: number, startKey: Record<string, unknown> | undefined, filter?: { expression: string; values: Record<string, unknown> },
) {
  const { items, lastKey } = await queryListPage({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :r)',
    ExpressionAttributeValues: { ':pk': keys.broadcastRecipientsPk(businessId, broadcastId), ':r': keys.broadcastRecipientSkPrefix, ...(filter?.values ?? {}) },
    ...(filter ? { FilterExpression: filter.expression, ExpressionAttributeNames: { '#state': 'state' } } : {}),
  }, { limit, startKey, readSize: filter ? 200 : undefined }); // a filter leaves reads short: wider ones
  return { items: items.map(toRecipient), lastKey };
}

/** A sent recipient by its service message id (status webhooks). */
export async function recipientByMessage(businessId: string, messageId: string): Promise<Recipient | undefined> {
  const { items } = await queryIndexPage(keys.broadcastMessage(businessId, messageId).gsi1pk, { limit: 1 });
  const it = items[0];
  return it ? toRecipient(it) : undefined;
}
