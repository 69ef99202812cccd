/**
 * Scheduled Lambda (EventBridge rule, every minute): re-publishes outbox events whose publish was lost
 * (shared/webhooks/sweep.ts) and fails sends no answer ever settled (shared/messages/pending-sweep.ts).
 */
import { sweepOutbox } from '#shared/webhooks/sweep.ts';
import { sweepPendingSends } from '#shared/messages/pending-sweep.ts';

export const handler = async (): Promise<{ published: number; unconfirmedSends: number }> => ({
  published: await sweepOutbox(),
  unconfirmedSends: await sweepPendingSends(),
});
