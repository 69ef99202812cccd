/**
 * `enqueue` (shared/queue/queue.ts) goes through @aws-sdk/client-sqs over HTTP to the SQS stand-in
 * (infra/local/aws/sqs.ts), as a deployed function's send goes to SQS: the queue URL from its variable, the body,
 * DelaySeconds and String message attributes on the wire, SQS's errors back through the SDK, and a missing URL a
 * configuration error naming its variable. The pump (infra/local/queues.ts) is covered where workers run.
 */
import { enqueue } from '#shared/queue/queue.ts';
import { ConfigurationError } from '#shared/settings/env.ts';
import { startQueueSink, type QueueSink } from '../../support/queues.ts';

let queues: QueueSink;
beforeAll(async () => {
  queues = await startQueueSink();
});
afterAll(() => queues?.close());

describe('enqueue through @aws-sdk/client-sqs and the SQS stand-in', () => {
  it('sends body, delay and attributes to the queue its QUEUE_URL_<NAME> names', async () => {
    // Prepare
    queues.sqs.take('webhook-deliveries');

    // Act
    await enqueue('webhook-deliveries', { deliveryId: 'd-1' }, { delaySeconds: 4.4, attributes: { resent: 'sweep' } });

    // Assess
    const [message, ...rest] = queues.sqs.take('webhook-deliveries');
    expect(rest).toEqual([]);
    expect(JSON.parse(message.body)).toEqual({ deliveryId: 'd-1' });
    expect(message.attributes).toEqual({ resent: 'sweep' });
    // SQS takes whole seconds: a delay is rounded up, never shortened.
    expect(message.visibleAt - message.sentAt).toBe(5000);
    expect(queues.sqs.messages('events')).toEqual([]);
  });

  it('keeps a delay within what SQS accepts (at most 900 s)', async () => {
    await enqueue('ai', 'later', { delaySeconds: 3600 });
    const [message] = queues.sqs.take('ai');
    expect(message.visibleAt - message.sentAt).toBe(900_000);
  });

  it('fails the send with the SDK error SQS answers, e.g. for a queue that does not exist', async () => {
    // Prepare
    const url = process.env.QUEUE_URL_MEDIA!;
    process.env.QUEUE_URL_MEDIA = url.replace(/media$/, 'no-such-queue');

    // Act
    const sent = enqueue('media', { jobId: 'j' });

    // Assess
    try {
      await expect(sent).rejects.toMatchObject({ name: 'QueueDoesNotExist' });
      expect(queues.sqs.messages('media')).toEqual([]);
    } finally {
      process.env.QUEUE_URL_MEDIA = url;
    }
  });

  it('fails loudly without the queue URL: a ConfigurationError naming the variable, nothing sent', async () => {
    const url = process.env.QUEUE_URL_BROADCASTS!;
    delete process.env.QUEUE_URL_BROADCASTS;
    try {
      const sent = enqueue('broadcasts', { type: 'start' });
      await expect(sent).rejects.toBeInstanceOf(ConfigurationError);
      await expect(sent).rejects.toMatchObject({ variable: 'QUEUE_URL_BROADCASTS' });
      expect(queues.sqs.messages('broadcasts')).toEqual([]);
    } finally {
      process.env.QUEUE_URL_BROADCASTS = url;
    }
  });

  it('answers only the action the service uses, so a new call fails here first', async () => {
    const res = await fetch(queues.sqs.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'AmazonSQS.ReceiveMessage' },
      body: JSON.stringify({ QueueUrl: queues.sqs.queueUrl('events') }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ __type: 'com.amazonaws.sqs#UnsupportedOperation' });
  });
});
