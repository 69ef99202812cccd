/**
 * Subscriptions in the table: pk B#{bid}#WHS, sk WH#{id} (a partition of their own, read whole by the
 * fan-out); the owner pointer of each id (pk WHID#{id}), which tells a 403 from a 404; and, per business,
 * a count and one claim per target (pk B#{bid}#WHT), written in the same transactions, so that the cap
 * and the refusal of duplicates hold under concurrent requests.
 */
import { GetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { applied, isConditionFailure } from '#shared/store/conditional.ts';
import { keys } from '#shared/store/keys.ts';
import { cancellationCodes } from '#shared/store/transact.ts';
import { queryAll } from '#shared/store/query.ts';
import { batchGetAll } from '#shared/store/batch.ts';
import type { Subscription } from './model.ts';
import { fromTableItem } from './table-item.ts';

/** Why a guarded write of a subscription did not apply. */
export type Refusal = 'limit_reached' | 'duplicate_target' | 'changed';

/** The refusal named by the first item of a cancelled transaction whose condition failed; other errors are rethrown. */
function refusal(err: unknown, byItem: (Refusal | undefined)[]): Refusal {
  const reason = byItem[cancellationCodes(err)?.indexOf('ConditionalCheckFailed') ?? -1];
  if (!reason) throw err;
  return reason;
}

/** The subscription item still is the one read (version unchanged; items from before versions have none). */
const unchanged = (s: Subscription) => s.version === undefined
  ? { ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(version)' }
  : { ConditionExpression: 'version = :seen', ExpressionAttributeValues: { ':seen': s.version } };

/**
 * Creates a subscription with its owner pointer, its business's count raised (refused at `cap`) and its
 * target claimed (refused when another subscription of the business has the same one), all or nothing.
 */
export async function putSubscription(s: Subscription, target: string, cap: number): Promise<Refusal | undefined> {
  try {
    await db.send(new TransactWriteCommand({
      TransactItems: [
        { Put: { TableName: table(), Item: { ...keys.webhook(s.businessId, s.id), type: 'webhook', ...s }, ConditionExpression: 'attribute_not_exists(pk)' } },
        { Put: { TableName: table(), Item: { ...keys.webhookOwner(s.id), type: 'webhookOwner', businessId: s.businessId } } },
        {
          Update: {
            TableName: table(), Key: keys.webhookCount(s.businessId), UpdateExpression: 'ADD subscriptions :one',
            ConditionExpression: 'attribute_not_exists(subscriptions) OR subscriptions < :cap', ExpressionAttributeValues: { ':one': 1, ':cap': cap },
          },
        },
        { Put: { TableName: table(), Item: { ...keys.webhookTarget(s.businessId, target), type: 'webhookTarget', webhookId: s.id }, ConditionExpression: 'attribute_not_exists(pk)' } },
      ],
    }));
    return undefined;
  } catch (err) {
    return refusal(err, [undefined, undefined, 'limit_reached', 'duplicate_target']);
  }
}

/** The subscription that holds a target of a business, if any. */
export async function targetHolder(bid: string, target: string): Promise<string | undefined> {
  const out = await db.send(new GetCommand({ TableName: table(), Key: keys.webhookTarget(bid, target), ConsistentRead: true }));
  return out.Item?.webhookId as string | undefined;
}

/** The business that owns a subscription id, if the id exists at all. */
export async function subscriptionOwner(id: string): Promise<string | undefined> {
  const out = await db.send(new GetCommand({ TableName: table(), Key: keys.webhookOwner(id) }));
  return out.Item?.businessId as string | undefined;
}

export async function getSubscription(bid: string, id: string): Promise<Subscription | undefined> {
  const out = await db.send(new GetCommand({ TableName: table(), Key: keys.webhook(bid, id), ConsistentRead: true }));
  return out.Item ? fromTableItem<Subscription>(out.Item) : undefined;
}

/** Every attribute of a subscription (what the fan-out's statement selects of the subscriptions' partition). */
export const SUBSCRIPTION_ATTRIBUTES = [
  'id', 'businessId', 'name', 'url', 'events', 'secret', 'enabled', 'disabledReason', 'disabledAt', 'failingSince', 'createdAt', 'updatedAt', 'version',
] as const satisfies readonly (keyof Subscription)[];
// A field added to Subscription and not to the list above fails to compile here.
const everyAttributeListed: Exclude<keyof Subscription, (typeof SUBSCRIPTION_ATTRIBUTES)[number]> extends never ? true : never = true;
void everyAttributeListed;

/** Subscriptions as the API lists them: oldest first. */
export const subscriptionsInOrder = (items: Record<string, unknown>[]): Subscription[] =>
  items.map((item) => fromTableItem<Subscription>(item)).sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));

export async function listSubscriptions(bid: string, consistent = false): Promise<Subscription[]> {
  return subscriptionsInOrder(await queryAll({
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.webhooksPk(bid) },
    ConsistentRead: consistent,
  }));
}

/** Raises a subscription's version: part of every update of it (shared/webhooks/current-subscriptions.ts). */
const RAISE_VERSION = 'version = if_not_exists(version, :zero) + :one';
const VERSION_VALUES = { ':zero': 0, ':one': 1 };

/**
 * Sets the given fields of an existing subscription (and raises its version); undefined when it does not exist, or
 * when `replacing` is given and the subscription's secret is no longer that one.
 */
export async function updateSubscription(bid: string, id: string, fields: Partial<Omit<Subscription, 'version'>>, { replacing }: { replacing?: string } = {}): Promise<Subscription | undefined> {
  const entries = Object.entries(fields).filter(([k, val]) => val !== undefined && k !== 'version');
  if (entries.length === 0) return getSubscription(bid, id);
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ...VERSION_VALUES };
  const sets = entries.map(([k, val], i) => {
    names[`#f${i}`] = k;
    values[`:v${i}`] = val;
    return `#f${i} = :v${i}`;
  });
  sets.push(RAISE_VERSION);
  try {
    const out = await db.send(new UpdateCommand({
      TableName: table(),
      Key: keys.webhook(bid, id),
      UpdateExpression: `SET ${sets.join(', ')}`,
      ConditionExpression: replacing === undefined ? 'attribute_exists(pk)' : 'attribute_exists(pk) AND secret = :replacing',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: replacing === undefined ? values : { ...values, ':replacing': replacing },
      ReturnValues: 'ALL_NEW',
    }));
    return fromTableItem<Subscription>(out.Attributes!);
  } catch (err) {
    if (isConditionFailure(err)) return undefined;
    throw err;
  }
}

/**
 * Sets new fields of a subscription whose target changes (URL or events): the old claim goes, the new one
 * is written conditionally, and the item only if it is still the one read. Refused: `duplicate_target`,
 * or `changed` (written meanwhile, or deleted: read it again).
 */
export async function retargetSubscription(s: Subscription, fields: Partial<Omit<Subscription, 'version'>>, from: string, to: string): Promise<Refusal | undefined> {
  const entries = Object.entries(fields).filter(([k, val]) => val !== undefined && k !== 'version');
  const guard = unchanged(s);
  try {
    await db.send(new TransactWriteCommand({
      TransactItems: [
        {
          Update: {
            TableName: table(), Key: keys.webhook(s.businessId, s.id),
            UpdateExpression: `SET ${[...entries.map((_, i) => `#f${i} = :v${i}`), RAISE_VERSION].join(', ')}`,
            ConditionExpression: guard.ConditionExpression,
            ExpressionAttributeNames: Object.fromEntries(entries.map(([k], i) => [`#f${i}`, k])),
            ExpressionAttributeValues: { ...guard.ExpressionAttributeValues, ...VERSION_VALUES, ...Object.fromEntries(entries.map(([, val], i) => [`:v${i}`, val])) },
          },
        },
        { Delete: { TableName: table(), Key: keys.webhookTarget(s.businessId, from) } },
        { Put: { TableName: table(), Item: { ...keys.webhookTarget(s.businessId, to), type: 'webhookTarget', webhookId: s.id }, ConditionExpression: 'attribute_not_exists(pk)' } },
      ],
    }));
    return undefined;
  } catch (err) {
    return refusal(err, ['changed', undefined, 'duplicate_target']);
  }
}

/** Deletes a subscription as read (else `changed`), its owner pointer and its target claim, and lowers its business's count. */
export async function deleteSubscription(s: Subscription, target: string): Promise<Refusal | undefined> {
  const guard = unchanged(s);
  try {
    await db.send(new TransactWriteCommand({
      TransactItems: [
        { Delete: { TableName: table(), Key: keys.webhook(s.businessId, s.id), ...guard } },
        { Delete: { TableName: table(), Key: keys.webhookOwner(s.id) } },
        { Update: { TableName: table(), Key: keys.webhookCount(s.businessId), UpdateExpression: 'ADD subscriptions :minusOne', ExpressionAttributeValues: { ':minusOne': -1 } } },
        { Delete: { TableName: table(), Key: keys.webhookTarget(s.businessId, target) } },
      ],
    }));
    return undefined;
  } catch (err) {
    return refusal(err, ['changed']);
  }
}

/** Remembers when a run of failures started (first failure only). */
export async function markFailing(bid: string, id: string, since: string): Promise<void> {
  await applied(db.send(new UpdateCommand({
    TableName: table(),
    Key: keys.webhook(bid, id),
    UpdateExpression: `SET failingSince = :s, ${RAISE_VERSION}`,
    ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(failingSince) OR failingSince = :null)',
    ExpressionAttributeValues: { ':s': since, ':null': null, ...VERSION_VALUES },
  })));
}

export async function clearFailing(bid: string, id: string): Promise<void> {
  await applied(db.send(new UpdateCommand({
    TableName: table(),
    Key: keys.webhook(bid, id),
    UpdateExpression: `SET failingSince = :null, ${RAISE_VERSION}`,
    ConditionExpression: 'attribute_exists(pk)',
    ExpressionAttributeValues: { ':null': null, ...VERSION_VALUES },
  })));
}

/** Subscriptions by key in one round trip (the delivery worker reads those of a whole batch at once). */
export async function getSubscriptions(refs: { businessId: string; webhookId: string }[]): Promise<Map<string, Subscription>> {
  const unique = [...new Map(refs.map((r) => [`${r.businessId}/${r.webhookId}`, r])).values()];
  const items = await batchGetAll(unique.map((r) => keys.webhook(r.businessId, r.webhookId)));
  return new Map(items.map((item) => {
    const s = fromTableItem<Subscription>(item);
    return [`${s.businessId}/${s.id}`, s];
  }));
}
