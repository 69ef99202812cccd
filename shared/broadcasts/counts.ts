/**
 * A broadcast's counters: the worker's deltas (top-level `c_*` numbers of the broadcast item, one ADD per step)
 * and the exact tally of every recipient that replaces them at completion.
 *
 * A delivery status moves its recipient and these counters in one transaction and counts itself in
 * `status_changes`; a tally is written only if no status changed while it was taken (`tallyGuard`), else it is
 * taken again. Without that, a status that lands between the tally's read and its write was lost or counted twice.
 */
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { QUERY_PAGE } from '#shared/store/query.ts';
import { applied } from '#shared/store/conditional.ts';
import { keys } from '#shared/store/keys.ts';
import { COUNT_NAMES, type Counts, type RecipientState } from './model.ts';

export type CountDelta = Partial<Record<keyof Counts, number>>;

/** The Update that adds `delta` to the counters (and, for a delivery status, counts one status change). */
export function countsUpdate(businessId: string, id: string, delta: CountDelta, { untilTallied = false, statusChange = false } = {}) {
  const entries = Object.entries(delta).filter(([, n]) => n);
  const adds: [name: string, value: string, n: number][] = entries.map(([, n], i) => [`#c${i}`, `:c${i}`, n!]);
  if (statusChange) adds.push(['#changes', ':one', 1]);
  return {
    TableName: table(),
    Key: keys.broadcast(businessId, id),
    UpdateExpression: `ADD ${adds.map(([name, value]) => `${name} ${value}`).join(', ')}`,
    ConditionExpression: untilTallied ? 'attribute_exists(pk) AND attribute_not_exists(counts_tallied)' : 'attribute_exists(pk)',
    ExpressionAttributeNames: { ...Object.fromEntries(entries.map(([k], i) => [`#c${i}`, `c_${k}`])), ...(statusChange ? { '#changes': 'status_changes' } : {}) },
    ExpressionAttributeValues: Object.fromEntries(adds.map(([, value, n]) => [value, n])),
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
export async function addCounts(businessId: string, id: string, delta: CountDelta, { untilTallied = false } = {}): Promise<void> {
  if (!Object.values(delta).some(Boolean)) return;
  await applied(db.send(new UpdateCommand(countsUpdate(businessId, id, delta, { untilTallied }))));
}

/** The counters as tallied from every recipient, marked so that the worker's late deltas no longer apply. */
export const talliedCounts = (counts: Counts): Record<string, number | boolean> => ({
  ...Object.fromEntries(COUNT_NAMES.map((n) => [`c_${n}`, counts[n]])),
  counts_tallied: true,
});

/** How many delivery statuses the broadcast has recorded (read before a tally, checked when it is written). */
export async function statusChanges(businessId: string, id: string): Promise<number> {
  const { Item } = await db.send(new GetCommand({ TableName: table(), Key: keys.broadcast(businessId, id), ProjectionExpression: 'status_changes', ConsistentRead: true }));
  return Number(Item?.status_changes ?? 0);
}

/** Whether the broadcast's final counts have been tallied (it ended). */
export async function isTallied(businessId: string, id: string): Promise<boolean> {
  const { Item } = await db.send(new GetCommand({ TableName: table(), Key: keys.broadcast(businessId, id), ProjectionExpression: 'counts_tallied', ConsistentRead: true }));
  return Item?.counts_tallied === true;
}

/** The condition (for `transition`) that no delivery status was recorded since `seen` was read. */
export const tallyGuard = (seen: number): [string, Record<string, unknown>] =>
  seen === 0 ? ['attribute_not_exists(status_changes)', {}] : ['status_changes = :seen', { ':seen': seen }];

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
      Limit: QUERY_PAGE,
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
