/** Messages of the `broadcasts` queue. */
export type BroadcastMessage =
  | { type: 'start'; businessId: string; broadcastId: string }
  /** One worker run of a running broadcast: sends (paced), sweeps a cancelled one, or completes it. */
  | { type: 'run'; businessId: string; broadcastId: string };

export const isBroadcastMessage = (x: unknown): x is BroadcastMessage =>
  typeof x === 'object' && x !== null && ((x as any).type === 'start' || (x as any).type === 'run')
  && typeof (x as any).businessId === 'string' && typeof (x as any).broadcastId === 'string';
