/**
 * Media jobs through the SQS stand-in, its pump and the real media worker module: the wait budget, the
 * hand-off to a finisher past the budget, client failures as outcomes, and retries of transient faults.
 */
import { startMediaHarness, serveFiles, type MediaHarness } from './harness.ts';
import { smallPng } from './files.ts';

let harness: MediaHarness;
let server: Awaited<ReturnType<typeof serveFiles>>;
let queues: import('#infra/local/queues.ts').LocalQueues;
let jobs: typeof import('#shared/media/jobs.ts');
let tenant: { businessId: string; phoneNumberId: string };

beforeAll(async () => {
  harness = await startMediaHarness();
  const api = await import('../../support/api.ts');
  const { startQueues } = await import('../../support/queues.ts');
  jobs = await import('#shared/media/jobs.ts');
  tenant = await api.newTenant();
  queues = await startQueues({ retryDelayMs: 50 });
  const png = await smallPng();
  server = await serveFiles({
    '/sandbox-unreachable/pic.png': { bytes: png, contentType: 'image/png' },
    '/sandbox-unreachable/slow.png': { bytes: png, contentType: 'image/png', delayMs: 6_000 },
    '/sandbox-unreachable/slower.png': { bytes: png, contentType: 'image/png', delayMs: 20_000 },
  });
});

afterAll(async () => {
  await queues?.stop();
  await server?.close();
  await harness?.stop();
});

const proxyJob = (path: string, extra: Record<string, unknown> = {}) => ({
  businessId: tenant.businessId,
  phoneNumberId: tenant.phoneNumberId,
  reason: 'proxy' as const,
  request: { type: 'image' as const, media: { link: server.url(path) } },
  ...extra,
});

// The worker module loads sharp, ffmpeg and the send path on first use: generous budgets on a busy machine.
const SLOW = 60_000;

describe('media jobs', () => {
  it('answers the prepared media when the worker finishes within the budget', async () => {
    // Act
    const result = await jobs.prepareThroughWorker(proxyJob('/sandbox-unreachable/pic.png'), 25_000);
    // Assess
    expect(result).toMatchObject({ status: 'ready', prepared: { type: 'image', action: 'proxied', media: { id: expect.any(String) } } });
  }, SLOW);

  it('throws the client error the worker recorded (no retry)', async () => {
    // Act
    const attempt = jobs.prepareThroughWorker(proxyJob('/nothing-here.png'), 25_000);
    // Assess
    await expect(attempt).rejects.toMatchObject({ status: 400, body: { error: 'media_download_failed' } });
    expect(queues.deadLetters).toHaveLength(0);
  }, SLOW);

  it('past the budget answers queued and the worker finishes the send through the finisher, once', async () => {
    // Prepare
    const finished: unknown[] = [];
    jobs.registerMediaJobFinisher('test-finisher', async (job, outcome) => {
      finished.push({ context: job.context, outcome });
    });
    // Act
    const result = await jobs.prepareThroughWorker(proxyJob('/sandbox-unreachable/pic.png', { finisher: 'test-finisher', context: { messageId: 'm1' } }), 0);
    await queues.idle();
    // Assess
    expect(result.status).toBe('queued');
    expect(finished).toEqual([{ context: { messageId: 'm1' }, outcome: { status: 'done', prepared: expect.objectContaining({ action: 'proxied' }) } }]);
    const record = await jobs.getMediaJob(tenant.businessId, result.jobId);
    expect(record).toMatchObject({ status: 'done', handedOff: true });
  }, SLOW);

  it('stops waiting in time for its request to answer: under a request with 4 s left, a 25 s budget hands off before the worker is done', async () => {
    // Prepare: the worker needs 6 s for this file; the request ends in 4 s, and keeps 2 s of it to answer.
    const { withInvocationEnd } = await import('#shared/lang/invocation-end.ts');
    const finished: unknown[] = [];
    jobs.registerMediaJobFinisher('slow-finisher', async (job) => {
      finished.push(job.context);
    });
    // Act
    const result = await withInvocationEnd(4_000, () => jobs.prepareThroughWorker(proxyJob('/sandbox-unreachable/slow.png', { finisher: 'slow-finisher', context: { messageId: 'm2' } }), 25_000));
    await queues.idle();
    // Assess: queued (with the whole budget it would have waited for the file and answered ready)
    expect(result.status).toBe('queued');
    expect(finished).toEqual([{ messageId: 'm2' }]);
  }, SLOW);

  it("records a job its last attempt cannot finish in the invocation's time as failed, before Lambda would stop the worker", async () => {
    // Prepare: a job whose file takes 20 s to download, on its last receive, in an invocation with 7 s left (5 s kept to record)
    const { PutCommand } = await import('@aws-sdk/lib-dynamodb');
    const { db, table } = await import('#shared/store/client.ts');
    const { keys } = await import('#shared/store/keys.ts');
    const { handler } = (await import('#functions/workers/media.ts')) as any;
    const jobId = crypto.randomUUID();
    const job = { ...proxyJob('/sandbox-unreachable/slower.png'), jobId };
    await db.send(new PutCommand({ TableName: table(), Item: { ...keys.mediaJob(tenant.businessId, jobId), type: 'mediaJob', ...job, status: 'pending', createdAt: new Date().toISOString() } }));
    const record = { messageId: jobId, receiptHandle: 'r', body: JSON.stringify({ businessId: tenant.businessId, jobId }), attributes: { ApproximateReceiveCount: '3' }, messageAttributes: {}, md5OfBody: '', eventSource: 'aws:sqs', eventSourceARN: 'arn:aws:sqs:us-east-1:0:media', awsRegion: 'us-east-1' };
    const started = Date.now();

    // Act
    const response = await handler({ Records: [record] }, { awsRequestId: jobId, getRemainingTimeInMillis: () => 7_000 - (Date.now() - started) });

    // Assess
    expect(Date.now() - started).toBeLessThan(6_000);
    expect(response).toEqual({ batchItemFailures: [] });
    expect(await jobs.getMediaJob(tenant.businessId, jobId)).toMatchObject({ status: 'failed', outcome: { status: 'failed', error: { status: 502, body: { error: 'media_processing_failed' } } } });
  }, SLOW);

  it('retries a transient upstream fault and then succeeds', async () => {
    // Prepare: the next upload to the upstream answers 500 (the client makes one attempt in these tests).
    harness.sandbox.state.faults.push({ kind: 'error500', remaining: 1, target: 'media' });
    // Act
    const result = await jobs.prepareThroughWorker(proxyJob('/sandbox-unreachable/pic.png'), 25_000);
    // Assess
    expect(result.status).toBe('ready');
    expect(harness.sandbox.state.faults).toHaveLength(0);
  }, SLOW);
});
