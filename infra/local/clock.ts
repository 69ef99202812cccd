/**
 * The local stand-in for the EventBridge rules of infra/scheduling.ts: each function of shared/routes.ts
 * `scheduled` runs in this process at its rate, one run at a time (a run still going when the next is due lets
 * that one pass), with the event and context a rule's invocation brings. Its module loads at its first run.
 */
import { randomUUID } from 'node:crypto';
import type { Context, ScheduledEvent } from 'aws-lambda';
import { scheduled } from '#shared/routes.ts';
import { LOCAL_ACCOUNT, LOCAL_REGION } from './aws/sqs.ts';

export interface ClockOptions {
  /** How long a minute lasts (tests shorten it). */
  minuteMs?: number;
  onError?: (handler: string, err: unknown) => void;
}

type ScheduledHandler = (event: ScheduledEvent, context: Context) => Promise<unknown>;

/** Starts the clock; returns a function that stops it. */
export function startClock({ minuteMs = 60_000, onError }: ClockOptions = {}): () => void {
  const timers = scheduled.map(({ handler: module, everyMinutes }) => {
    let running = false;
    const run = async () => {
      const { handler } = (await import(`../../functions/${module}.ts`)) as { handler: ScheduledHandler };
      const name = module.replace(/\//g, '-');
      const event: ScheduledEvent = {
        version: '0', id: randomUUID(), 'detail-type': 'Scheduled Event', source: 'aws.events', account: LOCAL_ACCOUNT,
        time: new Date().toISOString(), region: LOCAL_REGION, resources: [`arn:aws:events:${LOCAL_REGION}:${LOCAL_ACCOUNT}:rule/${name}`], detail: {},
      };
      await handler(event, { functionName: name, awsRequestId: randomUUID(), getRemainingTimeInMillis: () => 60_000 } as Context);
    };
    const timer = setInterval(() => {
      if (running) return;
      running = true;
      run().catch((err) => onError?.(module, err)).finally(() => {
        running = false;
      });
    }, everyMinutes * minuteMs);
    timer.unref();
    return timer;
  });
  return () => timers.forEach((t) => clearInterval(t));
}
