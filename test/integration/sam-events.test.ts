/**
 * The sample SQS events that SAM users invoke the workers with (infra/sam/events/<worker>.json, README "SAM"):
 * one per worker, each a well-formed SQS event from that worker's queue that the worker's own parser accepts and that
 * the worker handles against DynamoDB Local without failing a record.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SQSEvent } from 'aws-lambda';
import { workerContext } from '#infra/local/lambda/context.ts';
import * as v from 'valibot';
import { workers } from '#shared/routes.ts';
import { aiJobSchema } from '#shared/ai/agent.ts';
import { isBroadcastMessage } from '#shared/broadcasts/messages.ts';

const dir = fileURLToPath(new URL('../../infra/sam/events', import.meta.url));
const sample = (worker: { handler: string }): SQSEvent => JSON.parse(readFileSync(join(dir, `${basename(worker.handler)}.json`), 'utf8'));

describe('SAM sample events', () => {
  it('has exactly one sample per worker, named after its handler module', () => {
    expect(readdirSync(dir).sort()).toEqual(workers.map((w) => `${basename(w.handler)}.json`).sort());
  });

  it.each(workers.map((w) => [w.handler, w] as const))('%s: an SQS event of its queue that the worker handles without a failed record', async (_handler, worker) => {
    const event = sample(worker);
    expect(event.Records).toHaveLength(1);
    expect(event.Records[0]).toMatchObject({ eventSource: 'aws:sqs', eventSourceARN: expect.stringMatching(new RegExp(`:${worker.queue}$`)), attributes: { ApproximateReceiveCount: '1' } });
    expect(() => JSON.parse(event.Records[0].body)).not.toThrow();
    const { handler } = await import(`#functions/${worker.handler}.ts`);
    await expect(handler(event, workerContext(worker))).resolves.toEqual({ batchItemFailures: [] });
  });

  it('passes the parsers of the workers that drop a malformed message without failing it', () => {
    const body = (handler: string) => JSON.parse(sample(workers.find((w) => w.handler === handler)!).Records[0].body);
    expect(v.safeParse(aiJobSchema, body('workers/ai')).success).toBe(true);
    expect(isBroadcastMessage(body('workers/broadcast'))).toBe(true);
    expect(v.safeParse(aiJobSchema, { ...body('workers/ai'), businessId: '' }).success).toBe(false);
  });
});
