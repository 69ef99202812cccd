/**
 * The outbox sweep: crash safety for the step between a committed state change and its publish. Any
 * outbox item older than `sweepAfterSeconds` was not fanned out (the publish was lost, or the fan-out
 * kept failing), so it is published again; the fan-out's conditional writes make a repeat harmless.
 * An EventBridge rule runs functions/scheduled/outbox-sweep.ts every minute (locally, the stack's clock:
 * infra/local/clock.ts).
 */
import { keys } from '#shared/store/keys.ts';
import { publish } from '#shared/events/outbox.ts';
import { logger } from '#shared/log/logger.ts';
import { outboxItemsBefore } from './outbox-store.ts';
import { webhookSettings } from './settings.ts';

export async function sweepOutbox(olderThanSeconds: number = webhookSettings.sweepAfterSeconds): Promise<number> {
  const before = new Date(Date.now() - olderThanSeconds * 1000).toISOString();
  let published = 0;
  for (let shard = 0; shard < keys.outboxShards; shard++) {
    const events = await outboxItemsBefore(shard, before);
    // Oldest first, so lanes fill in commit order.
    events.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    await publish(events, { resent: true });
    published += events.length;
  }
  if (published > 0) logger.warn('outbox sweep re-published events', { published });
  return published;
}
