/**
 * A function that lacks a setting it needs in AWS fails loudly, never through a silent fallback: an endpoint answers
 * its first request 500 `configuration_error` (the variable named in the log, not to the client) and changes nothing;
 * a worker throws (Lambda logs the error, which names the variable), so its whole batch goes back to the queue (and in
 * the end to the DLQ).
 */
import { jest } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { SQSEvent } from 'aws-lambda';
import { logger } from '#shared/log/logger.ts';
import { ConfigurationError } from '#shared/settings/env.ts';
import { signatureOf } from '#shared/upstream/signature.ts';
import { invoke, newTenant, type TestTenant } from '../../support/api.ts';
import { startQueueSink, type QueueSink } from '../../support/queues.ts';
import { TEST_UPSTREAM } from '../../support/upstream-secret.ts';

let queues: QueueSink;
let tenant: TestTenant;
beforeAll(async () => {
  queues = await startQueueSink();
  tenant = await newTenant();
});
afterAll(() => queues?.close());

/** Runs `act` with `variable` unset, and answers what it returned and what was logged as an error meanwhile. */
async function without<T>(variable: string, act: () => Promise<T>): Promise<{ result: T; logged: unknown[][] }> {
  const value = process.env[variable];
  const errorLog = jest.spyOn(logger, 'error');
  delete process.env[variable];
  try {
    return { result: await act(), logged: errorLog.mock.calls.map((c) => [...c]) };
  } finally {
    process.env[variable] = value;
    errorLog.mockRestore();
  }
}

const expectConfigurationReply = (res: { status: number; body: any }, logged: unknown[][], variable: string) => {
  expect(res.status).toBe(500);
  expect(res.body).toEqual({ error: 'configuration_error', message: expect.any(String) });
  expect(JSON.stringify(res.body)).not.toContain(variable);
  expect(logged).toContainEqual(['configuration error', expect.objectContaining({ variable })]);
};

const sqsEvent = (queue: string, bodies: unknown[]): SQSEvent => ({
  Records: bodies.map((b) => ({
    messageId: randomUUID(), receiptHandle: 'r', body: JSON.stringify(b),
    attributes: { ApproximateReceiveCount: '1', SentTimestamp: '0', SenderId: 'test', ApproximateFirstReceiveTimestamp: '0' },
    messageAttributes: {}, md5OfBody: '', eventSource: 'aws:sqs', eventSourceARN: `arn:aws:sqs:us-east-1:000000000000:${queue}`, awsRegion: 'us-east-1',
  })),
});

describe('an endpoint without a setting it needs', () => {
  it('answers 500 configuration_error without TABLE_NAME', async () => {
    const { result, logged } = await without('TABLE_NAME', () => invoke('GET /funnel/v1/stages', { apiKey: tenant.apiKey }));
    expectConfigurationReply(result, logged, 'TABLE_NAME');
  });

  it('answers 500 without QUEUE_URL_EVENTS, before the change is written', async () => {
    const name = `Stage ${randomUUID().slice(0, 8)}`;
    const { result, logged } = await without('QUEUE_URL_EVENTS', () => invoke('POST /funnel/v1/stages', { apiKey: tenant.apiKey, body: { name } }));
    expectConfigurationReply(result, logged, 'QUEUE_URL_EVENTS');
    const stages = await invoke('GET /funnel/v1/stages', { apiKey: tenant.apiKey });
    expect(JSON.stringify(stages.body)).not.toContain(name);
  });

  it('answers 500 without MEDIA_BUCKET', async () => {
    const { result, logged } = await without('MEDIA_BUCKET', () => invoke('POST /media/v1/uploads', { apiKey: tenant.apiKey, body: { type: 'image', file_size: 1000 } }));
    expectConfigurationReply(result, logged, 'MEDIA_BUCKET');
  });

  it('answers 500 without BROADCAST_SCHEDULER_ROLE_ARN for a scheduled broadcast, storing nothing', async () => {
    const body = { name: 'Later', templateName: 'hello_world', language: 'en_US', contact_ids: [randomUUID()], send_at: new Date(Date.now() + 3_600_000).toISOString() };
    const { result, logged } = await without('BROADCAST_SCHEDULER_ROLE_ARN', () => invoke('POST /broadcasts/v1', { apiKey: tenant.apiKey, body }));
    expectConfigurationReply(result, logged, 'BROADCAST_SCHEDULER_ROLE_ARN');
    expect((await invoke('GET /broadcasts/v1', { apiKey: tenant.apiKey })).body.data).toEqual([]);
  });

  it('answers 500 without QUEUE_URL_BROADCASTS for an immediate broadcast, storing nothing', async () => {
    const t = await newTenant();
    const body = { name: 'Now', templateName: 'hello_world', language: 'en_US', contact_ids: [randomUUID()] };
    const { result, logged } = await without('QUEUE_URL_BROADCASTS', () => invoke('POST /broadcasts/v1', { apiKey: t.apiKey, body }));
    expectConfigurationReply(result, logged, 'QUEUE_URL_BROADCASTS');
    expect((await invoke('GET /broadcasts/v1', { apiKey: t.apiKey })).body.data).toEqual([]);
  });

  it('answers an upstream webhook 500 without QUEUE_URL_UPSTREAM_EVENTS, so that the upstream delivers it again', async () => {
    const raw = JSON.stringify({ object: 'whatsapp_business_account', entry: [] });
    const headers = { 'x-hub-signature-256': signatureOf(raw, TEST_UPSTREAM.appSecret) };
    const { result, logged } = await without('QUEUE_URL_UPSTREAM_EVENTS', () => invoke('POST /webhooks/upstream', { rawBody: raw, headers }));
    expectConfigurationReply(result, logged, 'QUEUE_URL_UPSTREAM_EVENTS');
    expect(queues.sqs.messages('upstream-events')).toEqual([]);
  });
});

describe('a worker without a setting it needs', () => {
  const event = { id: randomUUID(), businessId: randomUUID(), event: 'funnel_stage.created', data: {}, createdAt: new Date().toISOString() };

  it.each([
    ['events', 'workers/event-fanout', [event]],
    ['upstream-events', 'workers/upstream-events', [{ entry: [{ changes: [{ field: 'messages', value: { metadata: { phone_number_id: '123' }, messages: [] } }] }] }]],
    ['ai', 'workers/ai', [{ businessId: randomUUID(), conversationId: 'c', messageId: 'm' }]],
    ['webhook-deliveries', 'workers/webhook-delivery', [{ businessId: randomUUID(), webhookId: 'w', deliveryId: 'd' }]],
  ])('%s: throws the ConfigurationError (Lambda logs it; the batch is retried, then dead-lettered) without TABLE_NAME', async (queue, handler, bodies) => {
    const { handler: run } = await import(`../../../functions/${handler}.ts`);
    const { result } = await without('TABLE_NAME', async () => {
      try {
        return await run(sqsEvent(queue, bodies), { awsRequestId: randomUUID(), getRemainingTimeInMillis: () => 30_000 });
      } catch (err) {
        return err;
      }
    });
    expect(result).toBeInstanceOf(ConfigurationError);
    expect(result).toMatchObject({ variable: 'TABLE_NAME', message: expect.stringContaining('TABLE_NAME') });
  });
});
