/**
 * Scheduled Lambda (EventBridge rule, every minute): re-publishes outbox events whose publish was lost.
 * See shared/webhooks/sweep.ts.
 */
import { sweepOutbox } from '#shared/webhooks/sweep.ts';

export const handler = async (): Promise<{ published: number }> => ({ published: await sweepOutbox() });
