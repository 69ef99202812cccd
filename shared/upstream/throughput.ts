/**
 * Cloud API throughput is per phone number, whichever container sends: each send reserves a place in the
 * phone number's current one-second window (a conditional counter in the table, like the per-key limits),
 * and waits for the next second when the window is full.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { applied } from '#shared/store/conditional.ts';
import { keys } from '#shared/store/keys.ts';
import { logger } from '#shared/log/logger.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Resolves once a send may go out, with the second (epoch) whose window it took; after `maxWaitMs` it lets the send
 * go without a place (undefined): the upstream's 130429 and our retries remain.
 */
export async function reserveSendSlot(phoneNumberId: string, perSecond: number, maxWaitMs = 10_000): Promise<number | undefined> {
  const deadline = Date.now() + maxWaitMs;
  while (Date.now() < deadline) {
    const second = Math.floor(Date.now() / 1000);
    const reserved = await applied(db.send(new UpdateCommand({
      TableName: table(),
      Key: keys.rateWindow(`PHONE#${phoneNumberId}`, 'upstream-mps', second),
      UpdateExpression: 'ADD #count :one SET #ttl = if_not_exists(#ttl, :ttl)',
      ConditionExpression: 'attribute_not_exists(#count) OR #count < :limit',
      ExpressionAttributeNames: { '#count': 'count', '#ttl': 'ttl' },
      ExpressionAttributeValues: { ':one': 1, ':limit': perSecond, ':ttl': second + 120 },
    })));
    if (reserved) return second;
    await sleep((second + 1) * 1000 - Date.now() + Math.random() * 20);
  }
  logger.warn('upstream throughput window still full; sending anyway', { phoneNumberId });
  return undefined;
}
