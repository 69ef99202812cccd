/**
 * Integration harness for messaging: the upstream sandbox on a free port (the service's UPSTREAM_BASE_URL),
 * handlers invoked with API Gateway events, and the sandbox's webhooks fed to the real receive handler.
 * Queue messages stay in the SQS stand-in (a sink without a pump, test/support/queues.ts): `drain()` takes the
 * upstream-events messages and runs the worker on them, and `events()` reads the domain events a business emitted.
 *
 * Service modules read the environment once, so everything is imported here, after the sandbox is up:
 * test files import only this harness.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { TEST_UPSTREAM } from '../../support/upstream-secret.ts';
import type { QueueName } from '#shared/queue/queue.ts';
import { startQueueSink } from '../../support/queues.ts';

export async function startHarness() {
  process.env.UPSTREAM_RETRY_BASE_MS = '10';
  process.env.UPSTREAM_TIMEOUT_MS = '3000';
  // The sandbox posts webhooks here; they go to the receive handler as API Gateway events.
  let receive: (raw: string, signature: string | undefined) => Promise<number> = async () => 503;
  const relay: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      const status = await receive(Buffer.concat(chunks).toString('utf8'), req.headers['x-hub-signature-256'] as string | undefined).catch(() => 500);
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((r) => relay.listen(0, '127.0.0.1', () => r()));
  const relayUrl = `http://127.0.0.1:${(relay.address() as AddressInfo).port}/webhooks/upstream`;

  const { startSandbox } = await import('#infra/local/sandbox/server.ts');
  const sandbox = await startSandbox({ port: 0, serviceWebhookUrl: relayUrl, appSecret: TEST_UPSTREAM.appSecret, accessToken: TEST_UPSTREAM.token });
  process.env.UPSTREAM_BASE_URL = sandbox.url;

  const queues = await startQueueSink();
  const api = await import('../../support/api.ts');
  const worker = await import('#functions/workers/upstream-events.ts');
  receive = async (raw, signature) =>
    (await api.invoke('POST /webhooks/upstream', { rawBody: raw, headers: signature ? { 'x-hub-signature-256': signature } : {} })).status;

  const take = (name: QueueName) => queues.sqs.take(name).map((m) => ({ queue: name, body: m.body, sentAt: m.sentAt }));
  /** An SQS record as Lambda gets it: its body, how often it was received, and when it was sent (SQS's SentTimestamp). */
  const sqsRecord = (body: string, receiveCount: number, sentAt = Date.now()) => ({
    messageId: randomUUID(), receiptHandle: 'r', body, attributes: { ApproximateReceiveCount: String(receiveCount), SentTimestamp: String(sentAt) } as any, messageAttributes: {}, md5OfBody: '', eventSource: 'aws:sqs', eventSourceARN: 'arn:aws:sqs:us-east-1:0:upstream-events', awsRegion: 'us-east-1',
  });
  /** Runs the upstream-events worker on queued webhook bodies (in order, each received the `receiveCount`th time); returns failed record count. */
  const runWorker = async (bodies: (string | { body: string; sentAt: number })[], receiveCount = 1) => {
    const records = bodies.map((b) => (typeof b === 'string' ? sqsRecord(b, receiveCount) : sqsRecord(b.body, receiveCount, b.sentAt)));
    const res = await worker.handler({ Records: records } as any);
    return res.batchItemFailures.length;
  };
  const allEvents: { queue: string; body: string }[] = [];
  const events = (businessId: string) => {
    allEvents.push(...take('events'));
    return allEvents.map((m) => JSON.parse(m.body)).filter((e) => e.businessId === businessId).map((e) => ({ event: e.event as string, data: e.data }));
  };

  const sandboxCall = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${sandbox.url}${path}`, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, body: await res.json() as any };
  };

  /** Delivers every webhook body the receive handler queued. */
  const drain = async () => runWorker(take('upstream-events'));
  const inbound = async (phoneNumberId: string, from: string, extra: Record<string, unknown> = {}) => {
    const res = await sandboxCall('POST', '/__sandbox/inbound', { from, text: 'Hola', phone_number_id: phoneNumberId, ...extra });
    if (res.status !== 200 || res.body.webhook_status !== 200) throw new Error(`inbound not accepted: ${JSON.stringify(res.body)}`);
    return res.body as { wamid: string; payload: any };
  };

  return {
    sandbox,
    sandboxCall,
    invoke: api.invoke,
    newTenant: api.newTenant,
    takeUpstreamEvents: () => take('upstream-events').map((m) => m.body),
    takeQueue: take,
    runWorker,
    drain,
    events,
    send: (apiKey: string, body: unknown, headers: Record<string, string> = {}) => api.invoke('POST /messages/v1', { apiKey, body, headers }),
    inbound,
    /** A new tenant and a customer who wrote in: their contact, conversation and 24-hour window exist. */
    openChat: async () => {
      const t = await api.newTenant();
      const to = randomPhone();
      const { wamid } = await inbound(t.phoneNumberId, to);
      if ((await drain()) !== 0) throw new Error('the inbound message was not processed');
      return { t, to, wamid };
    },
    status: async (wamid: string, status: string, extra: Record<string, unknown> = {}) => {
      const res = await sandboxCall('POST', '/__sandbox/status', { wamid, status, ...extra });
      if (res.status !== 200 || res.body.webhook_status !== 200) throw new Error(`status not accepted: ${JSON.stringify(res.body)}`);
    },
    sent: async (to: string) => (await sandboxCall('GET', `/__sandbox/sent?to=${encodeURIComponent(to)}`)).body as any[],
    stop: async () => {
      await queues.close();
      await sandbox.close();
      relay.closeAllConnections();
      await new Promise<void>((r) => relay.close(() => r()));
    },
  };
}

export type Harness = Awaited<ReturnType<typeof startHarness>>;

/** A random E.164 number whose last digits never hit a sandbox failure suffix. */
export const randomPhone = (): string => {
  let n = '+52155';
  while (n.length < 13) n += Math.floor(Math.random() * 10);
  return n + String(Math.floor(Math.random() * 8) + 1);
};
