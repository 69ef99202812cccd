/**
 * A broadcast's counters: the worker's deltas (top-level `c_*` numbers of the broadcast item, one ADD per step)
 * and the exact tally of every recipient that replaces them at completion.
 */
import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { applied } from '#shared/store/conditional.ts';
import { keys } from '#shared/store/keys.ts';
import { COUNT_NAMES, type Counts, type RecipientState } from './model.ts';

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
