/**
 * Sends whose answer never settled them. A message is recorded (queued, with an open attempt) before it goes
 * upstream; its own answer or a status webhook naming it settles it. An attempt still open after
 * PENDING_SEND_TIMEOUT_SECONDS (default 15 minutes, past any function's time-out) was cut off — before the
 * upstream call, or after an answer that was lost with no status naming the message (a client's own
 * `biz_opaque_callback_data`): it is settled `failed` with `send_unconfirmed` (and `message.failed`), so the
 * client sees it and can retry it. Run by the scheduled outbox sweep.
 */
import { DeleteCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { QUERY_PAGE } from '#shared/store/query.ts';
import { keys } from '#shared/store/keys.ts';
import { numberEnv } from '#shared/settings/env.ts';
import { logger } from '#shared/log/logger.ts';
import { getMessage } from './repository.ts';
import { settleFailed } from './send-state.ts';

const UNCONFIRMED = {
  code: 'send_unconfirmed',
  error: 'send_unconfirmed',
  message: 'The upstream never confirmed this send; it may not have reached the recipient. Retry it to send it again.',
};

export async function sweepPendingSends(olderThanSeconds = numberEnv('PENDING_SEND_TIMEOUT_SECONDS', 900, { min: 1 })): Promise<number> {
  const before = new Date(Date.now() - olderThanSeconds * 1000).toISOString();
  let failed = 0;
  for (let shard = 0; shard < keys.pendingSendShards; shard++) {
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await db.send(new QueryCommand({
        TableName: table(),
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk < :before',
        ExpressionAttributeValues: { ':pk': keys.pendingSendIndexPk(shard), ':before': before },
        ExclusiveStartKey: startKey,
        Limit: QUERY_PAGE,
      }));
      for (const marker of page.Items ?? []) {
        const message = await getMessage(marker.businessId, marker.messageId);
        const at = new Date().toISOString();
        if (message && (await settleFailed({ message, attempt: marker.attempt, at, error: UNCONFIRMED }))) {
          failed++;
          continue;
        }
        // No open attempt of this marker's left (its message is gone or was settled otherwise): the marker goes.
        await db.send(new DeleteCommand({
          TableName: table(),
          Key: keys.pendingSend(marker.businessId, marker.messageId),
          ConditionExpression: 'attempt = :attempt',
          ExpressionAttributeValues: { ':attempt': marker.attempt },
        })).catch(() => undefined);
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey);
  }
  if (failed > 0) logger.warn('pending sweep failed unconfirmed sends', { failed });
  return failed;
}
