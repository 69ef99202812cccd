/**
 * The broadcast scheduling port (shared/broadcasts/scheduler.ts) through @aws-sdk/client-scheduler over HTTP to
 * the Scheduler stand-in (infra/local/aws/scheduler.ts): a start is a one-time schedule targeting the broadcasts
 * queue, scheduling again updates it (ConflictException → UpdateSchedule), cancelling deletes it (a missing one is
 * fine), and a due schedule sends its input to the queue and deletes itself, as EventBridge Scheduler does.
 */
import { randomUUID } from 'node:crypto';
import { cancelStart, scheduleStart } from '#shared/broadcasts/scheduler.ts';
import { ConfigurationError } from '#shared/settings/env.ts';
import { startQueueSink, type QueueSink } from '../../support/queues.ts';
import { waitFor } from '../../support/wait.ts';

let queues: QueueSink;
beforeAll(async () => {
  queues = await startQueueSink();
});
afterAll(() => queues?.close());

const scheduleOf = (broadcastId: string) => queues.scheduler.list().find((s) => s.name === `broadcast-${broadcastId}`);

describe('broadcast schedules through @aws-sdk/client-scheduler and the Scheduler stand-in', () => {
  it('creates one schedule per broadcast, updates it when scheduled again, and deletes it on cancel', async () => {
    // Prepare
    const id = randomUUID();
    const inAnHour = new Date(Date.now() + 3_600_000 + 400);

    // Act
    await scheduleStart('b-1', id, new Date(Date.now() + 7_200_000));
    await scheduleStart('b-1', id, inAnHour);

    // Assess
    expect(queues.scheduler.list().filter((s) => s.name === `broadcast-${id}`)).toHaveLength(1);
    expect(scheduleOf(id)).toEqual({
      name: `broadcast-${id}`,
      group: 'default',
      expression: `at(${new Date(Math.ceil(inAnHour.getTime() / 1000) * 1000).toISOString().slice(0, 19)})`,
      at: new Date(Math.ceil(inAnHour.getTime() / 1000) * 1000),
      target: { arn: queues.sqs.queueArn('broadcasts'), roleArn: process.env.BROADCAST_SCHEDULER_ROLE_ARN, input: JSON.stringify({ type: 'start', businessId: 'b-1', broadcastId: id }) },
      actionAfterCompletion: 'DELETE',
      state: 'ENABLED',
    });

    await cancelStart(id);
    expect(scheduleOf(id)).toBeUndefined();
    await expect(cancelStart(id)).resolves.toBeUndefined();
  });

  it('sends the start message to the broadcasts queue when the schedule comes due, then deletes it', async () => {
    // Prepare
    const id = randomUUID();
    queues.sqs.take('broadcasts');

    // Act
    await scheduleStart('b-2', id, new Date(Date.now() + 1000));

    // Assess
    expect(scheduleOf(id)).toBeDefined();
    expect(queues.bodies('broadcasts')).toEqual([]);
    await waitFor('the start in the broadcasts queue', () => queues.sqs.messages('broadcasts').length > 0, 10_000);
    expect(queues.bodies('broadcasts')).toEqual([{ type: 'start', businessId: 'b-2', broadcastId: id }]);
    expect(scheduleOf(id)).toBeUndefined();
    expect(queues.scheduler.failures).toEqual([]);
  });

  it.each(['BROADCAST_QUEUE_ARN', 'BROADCAST_SCHEDULER_ROLE_ARN'])('fails loudly without %s, creating nothing', async (variable) => {
    const value = process.env[variable];
    delete process.env[variable];
    const id = randomUUID();
    try {
      const scheduled = scheduleStart('b-3', id, new Date(Date.now() + 60_000));
      await expect(scheduled).rejects.toBeInstanceOf(ConfigurationError);
      await expect(scheduled).rejects.toMatchObject({ variable });
      expect(scheduleOf(id)).toBeUndefined();
    } finally {
      process.env[variable] = value;
    }
  });
});
