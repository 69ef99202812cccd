/**
 * The local stand-in for EventBridge rules (infra/scheduling.ts): each rule invokes its function at its rate, one
 * run at a time (a run still going when the next is due lets that one pass), with the event a rule's invocation
 * brings. The local stack's rules run the modules of shared/routes.ts `scheduled` in its own process
 * (`scheduledModules`); deployed mode's invoke the functions its template's rules target.
 */
import { randomUUID } from 'node:crypto';
import type { Context, ScheduledEvent } from 'aws-lambda';
import { scheduled } from '#shared/routes.ts';
import { LOCAL_ACCOUNT, LOCAL_REGION } from './aws/sqs.ts';
import { functionNameOf, lambdaContext } from './lambda/context.ts';

export interface ClockRule {
  /** The rule's name (in its event's `resources`). */
  name: string;
  everyMinutes: number;
  invoke: (event: ScheduledEvent) => Promise<unknown>;
}

export interface ClockOptions {
  /** How long a minute lasts (tests shorten it). */
  minuteMs?: number;
  onError?: (rule: string, err: unknown) => void;
}

/** Starts the clock; returns a function that stops it. */
export function startClock(rules: ClockRule[], { minuteMs = 60_000, onError }: ClockOptions = {}): () => void {
  const timers = rules.map(({ name, everyMinutes, invoke }) => {
    let running = false;
    const timer = setInterval(() => {
      if (running) return;
      running = true;
      const event: ScheduledEvent = {
        version: '0', id: randomUUID(), 'detail-type': 'Scheduled Event', source: 'aws.events', account: LOCAL_ACCOUNT,
        time: new Date().toISOString(), region: LOCAL_REGION, resources: [`arn:aws:events:${LOCAL_REGION}:${LOCAL_ACCOUNT}:rule/${name}`], detail: {},
      };
      invoke(event).catch((err) => onError?.(name, err)).finally(() => {
        running = false;
      });
    }, everyMinutes * minuteMs);
    timer.unref();
    return timer;
  });
  return () => timers.forEach((t) => clearInterval(t));
}

type ScheduledHandler = (event: ScheduledEvent, context: Context) => Promise<unknown>;

/** A rule for each module of shared/routes.ts `scheduled`, run in this process (loaded at its first run). */
export const scheduledModules = (): ClockRule[] => scheduled.map(({ handler: module, everyMinutes, timeoutSeconds }) => {
  const name = functionNameOf(module);
  return {
    name,
    everyMinutes,
    invoke: async (event) => {
      const { handler } = (await import(`../../functions/${module}.ts`)) as { handler: ScheduledHandler };
      return handler(event, lambdaContext(name, { timeoutMs: timeoutSeconds * 1000 }));
    },
  };
});
