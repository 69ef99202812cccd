/**
 * One-off, for contacts written before the shard index was ordered newest first (2026-11-26): gives every active
 * contact of a business the newest-first shard sort key its next write would give it (projection.ts), so pages of
 * members come newest first at once (`npm run admin -- rekey-contacts --business ID`). Each update is conditioned on
 * the old key, so it never undoes a contact write that got there first; running it again changes nothing.
 */
import pLimit from 'p-limit';
import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { QUERY_PAGE } from '#shared/store/query.ts';
import { keys } from '#shared/store/keys.ts';
import { isConditionFailure } from '#shared/store/conditional.ts';
import { epochSeconds } from './normalize.ts';
import { shardOf } from './projection.ts';

const PARALLEL = 16;

/** Returns how many contacts got their new key. */
export async function rekeyShardOrder(bid: string): Promise<number> {
  const { pk, skPrefix } = keys.contactPrefix(bid);
  const limit = pLimit(PARALLEL);
  let rekeyed = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db.send(new QueryCommand({
      TableName: table(),
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': pk, ':prefix': skPrefix },
      ProjectionExpression: 'pk, sk, id, created_at, ssk',
      ExclusiveStartKey: start,
      Limit: QUERY_PAGE,
    }));
    const old = (page.Items ?? []).filter((item) => typeof item.ssk === 'string' && !item.ssk.includes('#'));
    await Promise.all(old.map((item) => limit(async () => {
      const { ssk } = keys.contactShard(bid, shardOf(item.id), item.id, epochSeconds(item.created_at));
      try {
        await db.send(new UpdateCommand({
          TableName: table(),
          Key: { pk: item.pk, sk: item.sk },
          UpdateExpression: 'SET ssk = :new',
          ConditionExpression: 'ssk = :old',
          ExpressionAttributeValues: { ':new': ssk, ':old': item.ssk },
        }));
        rekeyed++;
      } catch (err) {
        if (!isConditionFailure(err)) throw err;
      }
    })));
    start = page.LastEvaluatedKey;
  } while (start);
  return rekeyed;
}
