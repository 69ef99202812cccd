/**
 * Broadcast items in the table.
 *
 * - `B#{bid}` / `BCAST#{id}`: the broadcast, its status and its counters (top-level `c_*` numbers, so that a
 *   worker adds to them with one ADD); gsi1 lists a business's broadcasts newest first.
 * - `B#{bid}#BCAST#{id}` / `A#{n}`: an explicit audience, in chunks of 1000 contact ids (keeps the broadcast item small).
 * - `B#{bid}#BCAST#{id}` / `R#{contactId}`: one recipient. While it waits to be sent it sits in a sparse gsi1 queue
 *   in audience order; once sent, gsi1 points from the service message id back to it (status webhooks).
 * - `B#{bid}#SEGUSE#{segmentId}` / `broadcast#{id}`: the segment-usage marker read by `GET /segments/{id}/usage`.
 */
import {
  GetCommand, QueryCommand, UpdateCommand, type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { applied, isConditionFailure } from '#shared/store/conditional.ts';
import { keys } from '#shared/store/keys.ts';
import { batchWriteAll } from '#shared/store/batch.ts';
import type { TransactItem } from '#shared/events/outbox.ts';
import { segmentUsageItem } from '#shared/segments/usage.ts';
import { COUNT_NAMES, type Broadcast, type Counts, type Recipient, type RecipientState } from './model.ts';

const AUDIENCE_CHUNK = 1000;

export const toBroadcast = (item: Record<string, any>): Broadcast => ({
  id: item.id,
  businessId: item.businessId,
  name: item.name,
  status: item.status,
  template: item.template,
  audience: item.audience,
  send_at: item.send_at ?? null,
  created_at: item.created_at,
  updated_at: item.updated_at,
  started_at: item.started_at ?? null,
  completed_at: item.completed_at ?? null,
  cancelled_at: item.cancelled_at ?? null,
  failed_at: item.failed_at ?? null,
  error: item.error ?? null,
  pace_per_minute: Number(item.pace_per_minute ?? 0),
  counts: Object.fromEntries(COUNT_NAMES.map((n) => [n, Math.max(0, Number(item[`c_${n}`] ?? 0))])) as unknown as Counts,
});

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

/** The writes that create a broadcast: the item, its explicit audience chunks, its segment-usage marker. */
export function broadcastCreateItems(b: Broadcast, contactIds: string[] | undefined): TransactItem[] {
  const items: TransactItem[] = [{
    Put: {
      TableName: table(),
      Item: {
        ...keys.broadcast(b.businessId, b.id),
        ...keys.broadcastByRecency(b.businessId, b.created_at, b.id),
        type: 'broadcast',
        ...withoutCounts(b),
        ...Object.fromEntries(COUNT_NAMES.map((n) => [`c_${n}`, b.counts[n]])),
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  }];
  for (let i = 0; contactIds && i < contactIds.length; i += AUDIENCE_CHUNK) {
    items.push({
      Put: {
        TableName: table(),
        Item: { ...keys.broadcastAudienceChunk(b.businessId, b.id, i / AUDIENCE_CHUNK), type: 'broadcastAudience', contact_ids: contactIds.slice(i, i + AUDIENCE_CHUNK) },
      },
    });
  }
  if (b.audience.type === 'segment') {
    items.push({ Put: segmentUsageItem(b.businessId, b.audience.segment_id, { id: b.id, name: b.name, status: b.status, createdAt: b.created_at }) });
  }
  return items;
}

/** The stored attributes: no counts map (top-level `c_*` numbers instead) and no nulls, so that `attribute_not_exists(started_at)` means "not started". */
const withoutCounts = (b: Broadcast) => {
  const { counts: _counts, ...rest } = b;
  return Object.fromEntries(Object.entries(rest).filter(([, val]) => val !== null));
};

export async function getBroadcast(businessId: string, id: string): Promise<Broadcast | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: table(), Key: keys.broadcast(businessId, id), ConsistentRead: true }));
  return Item ? toBroadcast(Item) : undefined;
}

export async function listBroadcasts(businessId: string, limit: number, startKey: Record<string, unknown> | undefined, status?: string) {
  const items: Broadcast[] = [];
  let lastKey = startKey;
  // A status filter can leave a DynamoDB page short: keep reading until the page is full or the list ends.
  do {
    const page = await db.send(new QueryCommand({
      TableName: table(),
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.broadcastsByRecencyPk(businessId), ...(status ? { ':s': status } : {}) },
      ...(status ? { FilterExpression: '#status = :s', ExpressionAttributeNames: { '#status': 'status' } } : {}),
      ScanIndexForward: false,
      ExclusiveStartKey: lastKey,
      Limit: limit - items.length,
    }));
    items.push(...(page.Items ?? []).map(toBroadcast));
    lastKey = page.LastEvaluatedKey;
  } while (lastKey && items.length < limit);
  return { items, lastKey };
}

export async function explicitAudience(businessId: string, broadcastId: string): Promise<string[]> {
  const ids: string[] = [];
  let lastKey: Record<string, unknown> | undefined;
  do {
    const page = await db.send(new QueryCommand({
      TableName: table(),
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :a)',
      ExpressionAttributeValues: { ':pk': keys.broadcastRecipientsPk(businessId, broadcastId), ':a': keys.broadcastAudienceSkPrefix },
      ConsistentRead: true,
      ExclusiveStartKey: lastKey,
    }));
    for (const it of page.Items ?? []) ids.push(...(it.contact_ids as string[]));
    lastKey = page.LastEvaluatedKey;
  } while (lastKey);
  return ids;
}

/**
 * Conditional status change. Returns the updated broadcast, or undefined when its status was not one of `from`.
 * `set` holds extra attributes; `extra` more update clauses.
 */
export async function transition(
  businessId: string, id: string, from: string[], to: string, set: Record<string, unknown> = {}, condition?: string, conditionValues: Record<string, unknown> = {},
): Promise<Broadcast | undefined> {
  try {
    const { Attributes } = await db.send(new UpdateCommand({ ...transitionInput(businessId, id, from, to, set, condition, conditionValues), ReturnValues: 'ALL_NEW' }));
    return Attributes ? toBroadcast(Attributes) : undefined;
  } catch (err) {
    if (isConditionFailure(err)) return undefined;
    throw err;
  }
}

export function transitionInput(
  businessId: string, id: string, from: string[], to: string, set: Record<string, unknown> = {}, condition?: string, conditionValues: Record<string, unknown> = {},
) {
  const now = new Date().toISOString();
  const fields = { ...set, status: to, updated_at: now };
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ...conditionValues };
  const clauses = Object.entries(fields).map(([k, val], i) => {
    names[`#f${i}`] = k;
    values[`:f${i}`] = val;
    return `#f${i} = :f${i}`;
  });
  names['#status'] = 'status';
  from.forEach((s, i) => { values[`:from${i}`] = s; });
  return {
    TableName: table(),
    Key: keys.broadcast(businessId, id),
    UpdateExpression: `SET ${clauses.join(', ')}`,
    ConditionExpression: `#status IN (${from.map((_, i) => `:from${i}`).join(', ')})${condition ? ` AND ${condition}` : ''}`,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}

/**
 * Adds to the broadcast's counters (one write per worker step, not per message).
 *
 * `untilTallied`: the delta counts recipients the worker settled earlier. Once a tally of every recipient has
 * been written (`talliedCounts`), those recipients are in it, so a delta that arrives later (from a second run
 * of the same broadcast that flushed late) must not apply: it would count them twice (`total 5, sent 4,
 * skipped 2`). Status webhooks move counts after completion too, so they add without that condition.
 */
export async function addCounts(
  businessId: string, id: string, delta: Partial<Record<keyof Counts, number>>, { untilTallied = false } = {},
): Promise<void> {
  const entries = Object.entries(delta).filter(([, n]) => n);
  if (entries.length === 0) return;
  await applied(db.send(new UpdateCommand({
    TableName: table(),
    Key: keys.broadcast(businessId, id),
    UpdateExpression: `ADD ${entries.map(([k], i) => `#c${i} :c${i}`).join(', ')}`,
    ConditionExpression: untilTallied ? 'attribute_exists(pk) AND attribute_not_exists(counts_tallied)' : 'attribute_exists(pk)',
    ExpressionAttributeNames: Object.fromEntries(entries.map(([k], i) => [`#c${i}`, `c_${k}`])),
    ExpressionAttributeValues: Object.fromEntries(entries.map(([, n], i) => [`:c${i}`, n])),
  })));
}

/** The counters as tallied from every recipient, marked so that the worker's late deltas no longer apply. */
export const talliedCounts = (counts: Counts): Record<string, number | boolean> => ({
  ...Object.fromEntries(COUNT_NAMES.map((n) => [`c_${n}`, counts[n]])),
  counts_tallied: true,
});

/** Keeps the usage marker's status in step (best effort: the marker is a pointer, the broadcast is the truth). */
export async function updateUsageStatus(b: Broadcast, status: string): Promise<void> {
  if (b.audience.type !== 'segment') return;
  await db.send(new UpdateCommand({
    TableName: table(),
    Key: keys.segmentUsage(b.businessId, b.audience.segment_id, 'broadcast', b.id),
    UpdateExpression: 'SET #s = :s',
    ConditionExpression: 'attribute_exists(pk)',
    ExpressionAttributeNames: { '#s': 'status' },
    ExpressionAttributeValues: { ':s': status },
  })).catch(() => undefined);
}

// ---- recipients -------------------------------------------------------------------------------------------

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

/** The head of the send queue: recipients pending or claimed, in audience order (gsi1, eventually consistent). */
export async function queueHead(businessId: string, broadcastId: string, limit: number): Promise<Recipient[]> {
  const page = await db.send(new QueryCommand({
    TableName: table(),
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.broadcastQueuePk(businessId, broadcastId) },
    Limit: limit,
  }));
  return (page.Items ?? []).map(toRecipient);
}

const recipientKey = (businessId: string, broadcastId: string, contactId: string) => keys.broadcastRecipient(businessId, broadcastId, contactId);

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
  | { state: 'sent'; message_id: string | null; wamid: string | null }
  | { state: 'failed'; message_id: string | null; error: { error: string; code?: string; message: string } }
  | { state: 'cancelled'; reason: string }
  | { state: 'pending' };

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
  } else if (outcome.state === 'cancelled') {
    Object.assign(values, { ':reason': outcome.reason });
    set.push('#reason = :reason');
    names['#reason'] = 'reason';
    remove.push('gsi1pk', 'gsi1sk', 'send_request');
  } else {
    remove = ['lease', 'lease_until'];
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

/** Every recipient's state, read consistently from the base table: the exact counts at completion. */
export async function tallyRecipients(businessId: string, broadcastId: string): Promise<{ counts: Counts; open: number }> {
  const counts: Counts = { total: 0, sent: 0, delivered: 0, read: 0, failed: 0, skipped: 0, cancelled: 0 };
  let open = 0;
  let lastKey: Record<string, unknown> | undefined;
  do {
    const page = await db.send(new QueryCommand({
      TableName: table(),
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :r)',
      ExpressionAttributeValues: { ':pk': keys.broadcastRecipientsPk(businessId, broadcastId), ':r': keys.broadcastRecipientSkPrefix },
      ProjectionExpression: '#state, delivery_status',
      ExpressionAttributeNames: { '#state': 'state' },
      ConsistentRead: true,
      ExclusiveStartKey: lastKey,
    }));
    for (const it of page.Items ?? []) {
      counts.total++;
      const state = it.state as RecipientState;
      if (state === 'pending' || state === 'sending') open++;
      else counts[state]++;
      if (state === 'sent' && it.delivery_status) {
        counts.delivered++;
        if (it.delivery_status === 'read') counts.read++;
      }
    }
    lastKey = page.LastEvaluatedKey;
  } while (lastKey);
  return { counts, open };
}

export async function listRecipients(
  businessId: string, broadcastId: string, limit: number, startKey: Record<string, unknown> | undefined, filter?: { expression: string; values: Record<string, unknown> },
) {
  const items: Recipient[] = [];
  let lastKey = startKey;
  do {
    const input: QueryCommandInput = {
      TableName: table(),
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :r)',
      ExpressionAttributeValues: { ':pk': keys.broadcastRecipientsPk(businessId, broadcastId), ':r': keys.broadcastRecipientSkPrefix, ...(filter?.values ?? {}) },
      ...(filter ? { FilterExpression: filter.expression, ExpressionAttributeNames: { '#state': 'state' } } : {}),
      ExclusiveStartKey: lastKey,
      // A filter can leave pages short: read wider pages and stop at `limit`.
      Limit: filter ? 200 : limit - items.length,
    };
    const page = await db.send(new QueryCommand(input));
    const got = page.Items ?? [];
    lastKey = page.LastEvaluatedKey;
    for (let i = 0; i < got.length; i++) {
      items.push(toRecipient(got[i]));
      if (items.length === limit) {
        // Resume right after the last item returned, unless it was the very end of the list.
        lastKey = i < got.length - 1 || page.LastEvaluatedKey ? { pk: got[i].pk, sk: got[i].sk } : undefined;
        break;
      }
    }
  } while (lastKey && items.length < limit);
  return { items, lastKey };
}

/** A sent recipient by its service message id (status webhooks). */
export async function recipientByMessage(businessId: string, messageId: string): Promise<Recipient | undefined> {
  const page = await db.send(new QueryCommand({
    TableName: table(),
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.broadcastMessage(businessId, messageId).gsi1pk },
    Limit: 1,
  }));
  const it = page.Items?.[0];
  return it ? toRecipient(it) : undefined;
}

export { recipientKey, toRecipient };
