/**
 * The business's messages-per-minute budget, shared by ordinary sends and broadcasts.
 *
 * - A minute window per business (`M{minuteStart}`) counts every message of the business. Ordinary sends
 *   take one unit each (`consumeOrdinarySend`, refused at the limit); broadcasts take what is left, but never
 *   the last `limit - pace` units, which stay free for ordinary sends.
 * - A second window per business (`S{second}`) spreads a broadcast evenly: second `s` gets the share
 *   floor(pace·(s+1)/62) − floor(pace·s/62), so any 62 consecutive seconds hold at most `pace` units.
 *   With sends finishing within a second of their reservation, no sliding 60-second window of broadcast
 *   messages exceeds the pace (62 rather than 60 covers that spill).
 * Counters are conditional atomic ADDs, exact across every Lambda instance, expired by TTL.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { isConditionFailure } from '#shared/store/conditional.ts';
import { keys } from '#shared/store/keys.ts';
import { broadcastSettings } from './settings.ts';

const SPREAD_SECONDS = 62;

export const secondShare = (pacePerMinute: number, epochSecond: number): number =>
  Math.floor((pacePerMinute * (epochSecond + 1)) / SPREAD_SECONDS) - Math.floor((pacePerMinute * epochSecond) / SPREAD_SECONDS);

const minuteWindow = (nowMs: number) => Math.floor(nowMs / 60_000) * 60;

/** Adds up to `n` units to a window without passing `cap`; returns how many it took. */
async function take(key: { pk: string; sk: string }, n: number, cap: number, ttl: number): Promise<number> {
  let want = Math.min(n, cap);
  for (let attempt = 0; attempt < 4 && want > 0; attempt++) {
    try {
      await db.send(new UpdateCommand({
        TableName: table(),
        Key: key,
        UpdateExpression: 'ADD #count :n SET #ttl = if_not_exists(#ttl, :ttl)',
        ConditionExpression: 'attribute_not_exists(#count) OR #count <= :room',
        ExpressionAttributeNames: { '#count': 'count', '#ttl': 'ttl' },
        ExpressionAttributeValues: { ':n': want, ':room': cap - want, ':ttl': ttl },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }));
      return want;
    } catch (err) {
      if (!isConditionFailure(err)) throw err;
      const current = Number((err as any).Item?.count?.N ?? cap);
      want = Math.min(want, cap - current);
    }
  }
  return 0;
}

async function giveBack(key: { pk: string; sk: string }, n: number): Promise<void> {
  if (n <= 0) return;
  await db.send(new UpdateCommand({
    TableName: table(),
    Key: key,
    UpdateExpression: 'ADD #count :n',
    ConditionExpression: 'attribute_exists(#count)',
    ExpressionAttributeNames: { '#count': 'count' },
    ExpressionAttributeValues: { ':n': -n },
  })).catch(() => undefined);
}

export interface Reservation {
  count: number;
  second: number;
  minute: number;
}

/** Reserves up to `want` broadcast messages for the current second. */
export async function reserveForBroadcast(businessId: string, want: number, nowMs = Date.now()): Promise<Reservation> {
  const { pacePerMinute } = broadcastSettings;
  const second = Math.floor(nowMs / 1000);
  const minute = minuteWindow(nowMs);
  const share = secondShare(pacePerMinute, second);
  const fromSecond = await take(keys.messageBudget(businessId, `S${second}`), Math.min(want, share), share, second + 120);
  if (fromSecond === 0) return { count: 0, second, minute };
  const fromMinute = await take(keys.messageBudget(businessId, `M${minute}`), fromSecond, pacePerMinute, minute + 180);
  if (fromMinute < fromSecond) await giveBack(keys.messageBudget(businessId, `S${second}`), fromSecond - fromMinute);
  return { count: fromMinute, second, minute };
}

/** Returns reserved units that were not used (recipients already gone, a cancel). */
export async function releaseBroadcast(businessId: string, r: Reservation, unused: number): Promise<void> {
  if (unused <= 0) return;
  await giveBack(keys.messageBudget(businessId, `S${r.second}`), unused);
  await giveBack(keys.messageBudget(businessId, `M${r.minute}`), unused);
}

/**
 * One ordinary message against the business budget: false when the business has used its whole limit
 * this minute (broadcasts included).
 */
export async function consumeOrdinarySend(businessId: string, nowMs = Date.now()): Promise<boolean> {
  const minute = minuteWindow(nowMs);
  return (await take(keys.messageBudget(businessId, `M${minute}`), 1, broadcastSettings.limitPerMinute, minute + 180)) === 1;
}

