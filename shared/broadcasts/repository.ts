/**
 * Broadcast items in the table: the broadcast record and what is written with it.
 *
 * - `B#{bid}` / `BCAST#{id}`: the broadcast, its status and its counters (top-level `c_*` numbers, so that a
 *   worker adds to them with one ADD: `counts.ts`); gsi1 lists a business's broadcasts newest first.
 * - `B#{bid}#BCAST#{id}` / `A#{n}`: an explicit audience, in chunks of 1000 contact ids (keeps the broadcast item small).
 * - `B#{bid}#SEGUSE#{segmentId}` / `broadcast#{id}`: the segment-usage marker read by `GET /segments/{id}/usage`.
 *
 * The recipients (`B#{bid}#BCAST#{id}` / `R#{contactId}`) are in `recipients.ts`.
 */
import { ownerPut } from '#shared/auth/ownership.ts';
import { DeleteCommand, GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { applied, isConditionFailure } from '#shared/store/conditional.ts';
import { keys } from '#shared/store/keys.ts';
import { queryAll, queryPrefix } from '#shared/store/query.ts';
import type { TransactItem } from '#shared/events/outbox.ts';
import { segmentUsageItem } from '#shared/segments/usage.ts';
import { COUNT_NAMES, type Broadcast, type Counts } from './model.ts';

const AUDIENCE_CHUNK = 1000;

const toBroadcast = (item: Record<string, any>): Broadcast => ({
  id: item.id,
  businessId: item.businessId,
  name: item.name,
  status: item.status,
  template: item.template,
  audience: item.audience,
  send_at: item.send_at ?? null,
  ...(item.schedule_slot !== undefined ? { schedule_slot: Number(item.schedule_slot) } : {}),
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
  }, ownerPut('broadcast', b.id, b.businessId)];
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
  if (b.send_at && b.schedule_slot !== undefined) {
    items.push({
      Put: {
        TableName: table(),
        Item: { ...keys.scheduledBroadcastSlot(b.businessId, b.schedule_slot), type: 'scheduledBroadcast', broadcastId: b.id, send_at: b.send_at, ttl: Math.floor(Date.parse(b.send_at) / 1000) + 86_400 },
        // A place is free when no broadcast holds it, or its broadcast's send_at has passed (it started).
        ConditionExpression: 'attribute_not_exists(pk) OR send_at <= :now',
        ExpressionAttributeValues: { ':now': b.created_at },
      },
    });
  }
  return items;
}

/**
 * The places (slots) of the business's broadcasts that wait for a send_at still ahead: null for one stored before
 * the places had numbers. A place is taken when its broadcast is created and given back when it is cancelled; one
 * whose broadcast started passed its send_at and is free again (its item expires a day later), so a start needs no
 * write here and a lost release heals by itself at the send_at.
 */
export async function scheduledPlaces(businessId: string, nowIso: string): Promise<(number | null)[]> {
  const items = await queryAll({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': keys.scheduledBroadcastsPk(businessId) }, ConsistentRead: true });
  return items.filter((item) => String(item.send_at) > nowIso).map((item) => {
    const sk = String(item.sk);
    return sk.startsWith(keys.scheduleSlotPrefix) ? Number(sk.slice(keys.scheduleSlotPrefix.length)) : null;
  });
}

/** Gives a cancelled broadcast's place under the cap back (if it still holds it). */
export async function releaseScheduled(b: Pick<Broadcast, 'businessId' | 'id' | 'schedule_slot'>): Promise<void> {
  if (b.schedule_slot === undefined) {
    await db.send(new DeleteCommand({ TableName: table(), Key: keys.scheduledBroadcast(b.businessId, b.id) }));
    return;
  }
  // Not applied when another broadcast holds the place now (this one's send_at passed, the place was taken again).
  await applied(db.send(new DeleteCommand({
    TableName: table(),
    Key: keys.scheduledBroadcastSlot(b.businessId, b.schedule_slot),
    ConditionExpression: 'broadcastId = :id',
    ExpressionAttributeValues: { ':id': b.id },
  })));
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
  const chunks = await queryPrefix<{ contact_ids: string[] }>(keys.broadcastRecipientsPk(businessId, broadcastId), keys.broadcastAudienceSkPrefix, true);
  return chunks.flatMap((chunk) => chunk.contact_ids);
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
