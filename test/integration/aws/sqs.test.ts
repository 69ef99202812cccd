/**
 * `enqueue` and `enqueueAll` (shared/queue/queue.ts) go through @aws-sdk/client-sqs over HTTP to the SQS stand-in
 * (infra/local/aws/sqs.ts), as a deployed function's send goes to SQS: the queue URL from its variable, the body,
 * DelaySeconds and String message attributes on the wire, SQS's errors back through the SDK, and a missing URL a
 * configuration error naming its variable. The pump (infra/local/queues.ts) is covered where workers run.
 */
import { enqueue, enqueueAll, QueueBatchError } from '#shared/queue/queue.ts';
import { ConfigurationError } from '#shared/settings/env.ts';
import { startQueueSink, type QueueSink } from '../../support/queues.ts';

let queues: QueueSink;
beforeAll(async () => {
  queues = await startQueueSink();
});
afterAll(() => queues?.close());

describe('enqueue and enqueueAll through @aws-sdk/client-sqs and the SQS stand-in', () => {
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

  it('sends many messages in SendMessageBatch requests of ten, each with its own delay and attributes', async () => {
    // Prepare
    queues.sqs.take('events');
    const before = queues.sqs.requests('AmazonSQS.SendMessageBatch');

    // Act
    await enqueueAll('events', Array.from({ length: 23 }, (_, i) => ({ message: { n: i }, options: i === 22 ? { delaySeconds: 2.5, attributes: { resent: 'sweep' } } : {} })));

    // Assess
    expect(queues.sqs.requests('AmazonSQS.SendMessageBatch') - before).toBe(3);
    const messages = queues.sqs.take('events');
    expect(messages.map((m) => JSON.parse(m.body).n).sort((a, b) => a - b)).toEqual(Array.from({ length: 23 }, (_, i) => i));
    const last = messages.find((m) => JSON.parse(m.body).n === 22)!;
    expect(last.attributes).toEqual({ resent: 'sweep' });
    expect(last.visibleAt - last.sentAt).toBe(3000);
    expect(messages.filter((m) => m !== last).every((m) => m.visibleAt === m.sentAt && Object.keys(m.attributes).length === 0)).toBe(true);
  });

  it('names the messages SQS refused and queues the rest', async () => {
    // Prepare: SQS takes at most 10 attributes per message.
    queues.sqs.take('events');
    const tooMany = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`a${i}`, 'x']));

    // Act
    const sent = enqueueAll('events', Array.from({ length: 12 }, (_, i) => ({ message: { n: i }, options: i === 7 ? { attributes: tooMany } : {} })));

    // Assess
    await expect(sent).rejects.toBeInstanceOf(QueueBatchError);
    await expect(sent).rejects.toMatchObject({ queue: 'events', failed: [7] });
    expect(queues.sqs.take('events').map((m) => JSON.parse(m.body).n).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11]);
  });

  it('answers only the actions the service uses, so a new call fails here first', async () => {
    const res = await fetch(queues.sqs.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'AmazonSQS.ReceiveMessage' },
      body: JSON.stringify({ QueueUrl: queues.sqs.queueUrl('events') }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ __type: 'com.amazonaws.sqs#UnsupportedOperation' });
  });
});
