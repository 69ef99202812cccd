/**
 * The broadcast worker's logic.
 *
 * start (`start.ts`): a scheduled broadcast becomes running; the audience is frozen into recipient items (a dynamic
 *   segment evaluated once); `broadcast.sent` is committed with the frozen counts; the first run is enqueued.
 * run (here): paces the sends for up to `loopMs`, one step per second, then hands over to a new queue message (the
 *   queue carries the broadcast across worker restarts). Each step reserves this second's share of the business
 *   budget, claims that many recipients (pending → sending, conditional) and hands them to the send pipeline
 *   (`pipeline.ts`), which sends and records each outcome under its claim. A recipient is never claimed twice, so
 *   nobody is sent twice even when a worker dies or a message is delivered twice; a claim whose worker died is
 *   resolved after the lease as `failed` (`outcome_unknown`) rather than risk a second message.
 * completion (`completion.ts`): when nothing is left the run tallies the recipients and commits `completed` with
 *   `broadcast.completed`; an error that no recipient can get past (template rejected, account not configured)
 *   commits `failed` with `broadcast.failed`. A cancelled or failed broadcast's run marks what has not gone out as
 *   `cancelled`.
 */
import { randomUUID } from 'node:crypto';
import { getBroadcast } from './repository.ts';
import { claimRecipient, queueHead } from './recipients.ts';
import { releaseBroadcast, reserveForBroadcast, secondShare } from './budget.ts';
import { broadcastSettings } from './settings.ts';
import { enqueueRun, type BroadcastMessage } from './messages.ts';
import { start } from './start.ts';
import { Pipeline } from './pipeline.ts';
import { complete, failBroadcast, sweep } from './completion.ts';
import type { Broadcast, Recipient } from './model.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A few milliseconds past the next second boundary, when the next second's share opens. */
const untilNextSecond = () => 1000 - (Date.now() % 1000) + 5;

export async function handleBroadcastMessage(msg: BroadcastMessage, receiveCount = 1): Promise<void> {
  if (msg.type === 'start') await start(msg.businessId, msg.broadcastId, receiveCount);
  else await run(msg.businessId, msg.broadcastId);
}

async function run(businessId: string, id: string): Promise<void> {
  const deadline = Date.now() + broadcastSettings.loopMs;
  let pipe: Pipeline | undefined;
  let next: number | undefined; // delay of the next run, when this one hands over
  try {
    for (;;) {
      if (pipe?.crash) break;
      const b = await getBroadcast(businessId, id);
      if (!b) return;
      pipe ??= new Pipeline(b, broadcastSettings.sendConcurrency);
      if (b.status === 'cancelled' || b.status === 'failed') {
        await pipe.drain();
        const left = await sweep(b);
        if (left === 'more') continue;
        if (left === 'wait') next = broadcastSettings.leaseMs / 4;
        return;
      }
      if (b.status !== 'running') return;
      if (!b.started_at) {
        next = 1000; // the start step is still freezing the audience
        return;
      }
      if (pipe.fatal) {
        await pipe.drain();
        await failBroadcast(b, pipe.fatal);
        pipe.fatal = undefined;
        return;
      }
      if (await step(b, pipe)) return;
      if (Date.now() + untilNextSecond() >= deadline) {
        next = untilNextSecond();
        return;
      }
      await sleep(untilNextSecond());
    }
  } finally {
    await pipe?.drain();
    if (pipe?.crash) throw pipe.crash;
    // A send that finished after the last look found the template or the account rejected.
    if (pipe?.fatal) {
      await failBroadcast(pipe.b, pipe.fatal);
      next = undefined;
    }
    if (next !== undefined) await enqueueRun(businessId, id, next);
  }
}

/** Launches this second's sends. Returns true when the broadcast is over (completed). */
async function step(b: Broadcast, pipe: Pipeline): Promise<boolean> {
  await pipe.flushCounts();
  if (pipe.throttled) {
    // The upstream asked to slow down: skip this second.
    pipe.throttled = false;
    return false;
  }
  const now = Date.now();
  const share = secondShare(b.pace_per_minute || broadcastSettings.pacePerMinute, Math.floor(now / 1000));
  const room = Math.min(share, pipe.capacity - pipe.inFlight);
  // The head also holds this run's own claims still in flight.
  const head = await queueHead(b.businessId, b.id, pipe.inFlight + Math.max(room, 1) + 25);
  if (head.length === 0 && pipe.inFlight === 0) return pipe.fatal ? false : complete(b);
  if (room <= 0) return false;

  // Claims whose worker died go first: resent under the same idempotency key, they get their first outcome back.
  const candidates = [
    ...head.filter((r) => r.state === 'sending' && (r.lease_until ?? 0) < now && !pipe.mine.has(r.contact_id)),
    ...head.filter((r) => r.state === 'pending'),
  ].slice(0, room);
  if (candidates.length === 0) return false;

  const reservation = await reserveForBroadcast(b.businessId, candidates.length, now);
  const lease = randomUUID();
  const claims = await Promise.all(candidates.slice(0, reservation.count).map((r) =>
    claimRecipient(b.businessId, b.id, r.contact_id, lease, now + broadcastSettings.leaseMs, r.state === 'sending' ? r.lease : undefined)));
  const claimed = claims.filter((r): r is Recipient => r !== undefined);
  await releaseBroadcast(b.businessId, reservation, reservation.count - claimed.length);
  for (const r of claimed) pipe.launch(r, lease);
  return false;
}
