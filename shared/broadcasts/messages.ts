/** Messages of the `broadcasts` queue. */
import { enqueue } from '#shared/queue/queue.ts';

export type BroadcastMessage =
  | { type: 'start'; businessId: string; broadcastId: string }
  /** One worker run of a running broadcast: sends (paced), sweeps a cancelled one, or completes it. */
  | { type: 'run'; businessId: string; broadcastId: string };

export const isBroadcastMessage = (x: unknown): x is BroadcastMessage =>
  typeof x === 'object' && x !== null && ((x as any).type === 'start' || (x as any).type === 'run')
  && typeof (x as any).businessId === 'string' && typeof (x as any).broadcastId === 'string';

export async function enqueueRun(businessId: string, broadcastId: string, delayMs = 0): Promise<void> {
  await enqueue('broadcasts', { type: 'run', businessId, broadcastId } satisfies BroadcastMessage, { delaySeconds: delayMs / 1000 });
}
