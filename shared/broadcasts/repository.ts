/**
 * Broadcast items in the table: the broadcast record and what is written with it.
 *
 * - `B#{bid}` / `BCAST#{id}`: the broadcast, its status and its counters (top-level `c_*` numbers, so that a
 *   worker adds to them with one ADD: `counts.ts`); gsi1 lists a business's broadcasts newest first.
 * - `B#{bid}#BCAST#{id}` / `A#{n}`: an explicit audience, in chunks of 1000 contact ids (keeps the broadcast item small).
 * - `B#{bid}#SEGUSE#{segmentId}` / `broadcast#{id}`: the segment-usage marker read by `GET /segments/{id}/usage`.
 * - `B#{bid}#BSCHED` and `B#{bid}#BRUN` / `SLOT#{n}`: the business's places for unfinished broadcasts (`places`).
 *
 * The recipients (`B#{bid}#BCAST#{id}` / `R#{contactId}`) are in `recipients.ts`.
 */
import { ownerPut } from '#shared/auth/ownership.ts';
import { DeleteCommand, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { applied, isConditionFailure } from '#shared/store/conditional.ts';
import { keys } from '#shared/store/keys.ts';
import { queryAll, queryListPage, queryPrefix } from '#shared/store/query.ts';
import { batchGetAll } from '#shared/store/batch.ts';
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

/**
 * The business's places for broadcasts not finished, in two pools: those created with a send_at (`scheduled`) and those
 * started at their create (`immediate`). A broadcast holds its place from its create to its end.
 */
export type PlacePool = 'scheduled' | 'immediate';
export const placePool = (b: Pick<Broadcast, 'send_at'>): PlacePool => (b.send_at ? 'scheduled' : 'immediate');
const poolPk = (businessId: string, pool: PlacePool) => (pool === 'scheduled' ? keys.scheduledBroadcastsPk(businessId) : keys.runningBroadcastsPk(businessId));
const placeKey = (businessId: string, pool: PlacePool, slot: number) =>
  (pool === 'scheduled' ? keys.scheduledBroadcastSlot(businessId, slot) : keys.runningBroadcastSlot(businessId, slot));

/** A new broadcast's place: its number, and the finished broadcast that still holds it, if any. */
export interface Place {
  slot: number;
  previous?: string;
}

/**
 * The writes that create a broadcast: the item, its explicit audience chunks, its segment-usage marker, and its place
 * in its pool (conditioned on being free: no item, or the finished broadcast the read found there).
 */
export function broadcastCreateItems(b: Broadcast, contactIds: string[] | undefined, place: Place): TransactItem[] {
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
  items.push({
    Put: {
      TableName: table(),
      Item: { ...placeKey(b.businessId, placePool(b), place.slot), type: 'broadcastPlace', broadcastId: b.id },
      ...(place.previous
        ? { ConditionExpression: 'broadcastId = :previous', ExpressionAttributeValues: { ':previous': place.previous } }
        : { ConditionExpression: 'attribute_not_exists(pk)' }),
    },
  });
  return items;
}

const FINISHED: ReadonlySet<string> = new Set(['completed', 'cancelled', 'failed']);

/** What a create needs to know of a pool: the places held (null: one taken before places had numbers), and those free again. */
export interface Places {
  held: (number | null)[];
  /** Places whose broadcast has finished (place → that broadcast's id): free for a new one. */
  finished: Map<number, string>;
}

/**
 * The places of a pool. No write frees a place when its broadcast ends (a cancel of one still waiting gives it back):
 * while the pool has places no broadcast ever took, the read is one query; once every place has had one, the
 * broadcasts holding them are read too (at most `max`, by key), and those that finished are free.
 */
export async function places(businessId: string, pool: PlacePool, max: number): Promise<Places> {
  const items = await queryAll({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': poolPk(businessId, pool) }, ConsistentRead: true });
  const entries = items.map((item) => {
    const sk = String(item.sk);
    // Before 2026-11-28 a scheduled broadcast's place was an item keyed by its id.
    return sk.startsWith(keys.scheduleSlotPrefix) ? { slot: Number(sk.slice(keys.scheduleSlotPrefix.length)), broadcastId: String(item.broadcastId) } : { slot: null, broadcastId: sk };
  });
  if (entries.length < max) return { held: entries.map((e) => e.slot), finished: new Map() };
  const found = await batchGetAll(entries.map((e) => keys.broadcast(businessId, e.broadcastId)), { projection: 'id, #status', names: { '#status': 'status' } });
  const statuses = new Map(found.map((item) => [String(item.id), String(item.status)]));
  const isFinished = (id: string) => !statuses.has(id) || FINISHED.has(statuses.get(id)!);
  return {
    held: entries.filter((e) => !isFinished(e.broadcastId)).map((e) => e.slot),
    finished: new Map(entries.flatMap((e) => (e.slot !== null && isFinished(e.broadcastId) ? [[e.slot, e.broadcastId] as const] : []))),
  };
}

/** Gives a cancelled broadcast's place under the cap back (if it still holds it). */
export async function releaseScheduled(b: Pick<Broadcast, 'businessId' | 'id' | 'schedule_slot'>): Promise<void> {
  if (b.schedule_slot === undefined) {
    await db.send(new DeleteCommand({ TableName: table(), Key: keys.scheduledBroadcast(b.businessId, b.id) }));
    return;
  }
  // Only while this broadcast still holds it.
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
  // A status filter can leave a DynamoDB read short: the page reads on until it is full or the list ends.
  const { items, lastKey } = await queryListPage({
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.broadcastsByRecencyPk(businessId), ...(status ? { ':s': status } : {}) },
    ...(status ? { FilterExpression: '#status = :s', ExpressionAttributeNames: { '#status': 'status' } } : {}),
    ScanIndexForward: false,
  }, { limit, startKey });
  return { items: items.map(toBroadcast), lastKey };
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
