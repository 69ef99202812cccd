/**
 * The local event source mapping (infra/local/queues.ts) hands a worker what a poll of SQS would return when one of
 * its invocation slots is free: the messages visible at that moment, up to the batch size. A burst that arrives while
 * every slot is busy is therefore handed over in full batches, and a worker's `maxConcurrency` (shared/routes.ts, the
 * same value infra/stack.ts gives the event source) bounds its batches at once.
 */
import type { SQSEvent } from 'aws-lambda';
import type { LocalQueues } from '#infra/local/queues.ts';
import type { Worker } from '#shared/routes.ts';
import { startQueues } from '../../support/queues.ts';

/** A worker whose batches stay open until `release()`; records each batch's size and the most open at once. */
function heldWorker() {
  const batches: number[] = [];
  let open = 0;
  let mostOpen = 0;
  let releases: (() => void)[] = [];
  return {
    batches,
    get mostOpen() { return mostOpen; },
    get open() { return open; },
    load: async (_w: Worker) => async (event: SQSEvent) => {
      batches.push(event.Records.length);
      mostOpen = Math.max(mostOpen, ++open);
      await new Promise<void>((r) => releases.push(r));
      open--;
    },
    release: () => {
      const now = releases;
      releases = [];
      now.forEach((r) => r());
    },
  };
}

const until = async (done: () => boolean) => {
  for (let i = 0; i < 500 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!done()) throw new Error('condition not reached in 5 s');
};

/** Lets the worker finish batch after batch until it has been handed `total` messages and none is open. */
async function drain(worker: ReturnType<typeof heldWorker>, total: number) {
  const handed = () => worker.batches.reduce((a, b) => a + b, 0);
  while (handed() < total || worker.open > 0) {
    worker.release();
    await new Promise((r) => setTimeout(r, 20));
  }
}

let queues: LocalQueues | undefined;
afterEach(async () => {
  await queues?.stop();
  queues = undefined;
});

describe('the local event source mapping', () => {
  it('batches what arrives while every slot is busy: a burst goes in full batches, not one message each', async () => {
    // Prepare: one slot, taken by the first message.
    const worker = heldWorker();
    queues = await startQueues({ concurrency: 1, queues: ['events'], load: worker.load });
    await queues.send('events', '{"n":0}');
    await until(() => worker.batches.length === 1);

    // Act: 24 more while the slot is busy, then let the worker go on.
    for (let i = 1; i <= 24; i++) await queues.send('events', JSON.stringify({ n: i }));
    await drain(worker, 25);
    await queues.idle(5_000);

    // Assess
    expect(worker.batches).toEqual([1, 10, 10, 4]);
    expect(worker.mostOpen).toBe(1);
  });

  it('counts its slots in batches (invocations), not messages', async () => {
    // Prepare
    const worker = heldWorker();
    queues = await startQueues({ concurrency: 4, queues: ['events'], load: worker.load });

    // Act: 45 messages at once.
    await Promise.all(Array.from({ length: 45 }, (_, i) => queues!.send('events', JSON.stringify({ n: i }))));
    await until(() => worker.open === 4);

    // Assess
    expect(worker.batches).toEqual([10, 10, 10, 10]);
    await drain(worker, 45);
    await queues.idle(5_000);
    expect(worker.batches).toEqual([10, 10, 10, 10, 5]);
  });

  it("runs at most the worker's maxConcurrency batches at once", async () => {
    // Prepare: broadcasts allow 2 (shared/routes.ts), the pump 4.
    const worker = heldWorker();
    queues = await startQueues({ concurrency: 4, queues: ['broadcasts'], load: worker.load });

    // Act: one message per tick, so each free slot would take one.
    for (let i = 0; i < 6; i++) {
      await queues.send('broadcasts', JSON.stringify({ n: i }));
      await new Promise((r) => setTimeout(r, 5));
    }
    await until(() => worker.open === 2);
    await new Promise((r) => setTimeout(r, 100));

    // Assess
    expect(worker.open).toBe(2);
    expect(worker.batches).toEqual([1, 1]);
    await drain(worker, 6);
    await queues.idle(5_000);
    expect(worker.mostOpen).toBe(2);
  });
});
