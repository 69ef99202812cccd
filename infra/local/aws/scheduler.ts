/**
 * A local stand-in for Amazon EventBridge Scheduler, at the Scheduler client's endpoint
 * (`AWS_ENDPOINT_URL_SCHEDULER`), speaking its REST-JSON protocol for exactly the calls the service makes:
 * CreateSchedule (`POST /schedules/{Name}`), UpdateSchedule (`PUT`) and DeleteSchedule (`DELETE`, `?groupName=`),
 * with Scheduler's errors (409 ConflictException, 404 ResourceNotFoundException, 400 ValidationException, in the
 * `x-amzn-errortype` header the SDK reads).
 *
 * It keeps the schedules and, when a one-time `at(...)` schedule comes due, does what Scheduler does for an SQS
 * target: sends the target's `Input` to the queue the target ARN names (through the SQS stand-in), then deletes
 * the schedule when `ActionAfterCompletion` is DELETE. Only what the service uses is accepted: `at()` expressions
 * in UTC with an SQS queue target; a schedule already due fires at once. A send that fails is kept in `failures`
 * (Scheduler would retry and then use the target's dead-letter queue). Timers live in memory, like the queues.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LOCAL_ACCOUNT, LOCAL_REGION, type SqsStandIn } from './sqs.ts';
import { listen, readBody, replyJson } from './wire.ts';

export interface LocalSchedule {
  name: string;
  group: string;
  expression: string;
  /** When it fires (from the `at()` expression). */
  at: Date;
  target: { arn: string; roleArn: string; input: string };
  actionAfterCompletion: string;
  state: string;
}

class SchedulerError extends Error {
  readonly status: number;
  readonly type: string;
  constructor(status: number, type: string, message: string) {
    super(message);
    this.status = status;
    this.type = type;
  }
}

const MAX_TIMER_MS = 2 ** 31 - 1;
const AT = /^at\((\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\)$/;

export class SchedulerStandIn {
  readonly failures: { schedule: string; error: string }[] = [];
  private readonly schedules = new Map<string, LocalSchedule>();
  private readonly timers = new Map<string, NodeJS.Timeout>();

  readonly endpoint: string;
  private readonly sqs: SqsStandIn;
  private readonly closeServer: () => Promise<void>;

  private constructor(endpoint: string, sqs: SqsStandIn, closeServer: () => Promise<void>) {
    this.endpoint = endpoint;
    this.sqs = sqs;
    this.closeServer = closeServer;
  }

  /** Starts the stand-in on `port` (0: a free one); due schedules are sent to queues of `sqs`. */
  static async start(sqs: SqsStandIn, port = 0): Promise<SchedulerStandIn> {
    let standIn: SchedulerStandIn | undefined;
    const server = await listen(port, (req, res) => void standIn!.handle(req, res));
    standIn = new SchedulerStandIn(server.url, sqs, server.close);
    return standIn;
  }

  /** Every schedule not yet fired and deleted, in creation order. */
  list(): LocalSchedule[] {
    return [...this.schedules.values()];
  }

  async close(): Promise<void> {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    await this.closeServer();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const url = new URL(req.url ?? '/', this.endpoint);
      const name = /^\/schedules\/([^/]+)$/.exec(url.pathname)?.[1];
      const raw = await readBody(req);
      if (!name) throw new SchedulerError(404, 'UnknownOperationException', `The local Scheduler stand-in has no operation at ${req.method} ${url.pathname}.`);
      const scheduleName = decodeURIComponent(name);
      if (req.method === 'POST' || req.method === 'PUT') {
        const schedule = this.put(scheduleName, JSON.parse(raw || '{}'), req.method === 'POST');
        replyJson(res, 200, { ScheduleArn: `arn:aws:scheduler:${LOCAL_REGION}:${LOCAL_ACCOUNT}:schedule/${schedule.group}/${schedule.name}` });
      } else if (req.method === 'DELETE') {
        const key = this.key(url.searchParams.get('groupName') ?? 'default', scheduleName);
        if (!this.schedules.has(key)) throw new SchedulerError(404, 'ResourceNotFoundException', `Schedule ${scheduleName} does not exist.`);
        this.remove(key);
        replyJson(res, 200, {});
      } else {
        throw new SchedulerError(404, 'UnknownOperationException', `The local Scheduler stand-in does not answer ${req.method} /schedules/{Name}.`);
      }
    } catch (err) {
      const e = err instanceof SchedulerError ? err : new SchedulerError(400, 'ValidationException', (err as Error).message);
      replyJson(res, e.status, { Message: e.message }, { 'x-amzn-errortype': e.type });
    }
  }

  /** CreateSchedule (`create`) or UpdateSchedule: both replace the whole definition. */
  private put(name: string, input: Record<string, any>, create: boolean): LocalSchedule {
    const group = input.GroupName ?? 'default';
    const key = this.key(group, name);
    if (create && this.schedules.has(key)) throw new SchedulerError(409, 'ConflictException', `Schedule ${name} already exists.`);
    if (!create && !this.schedules.has(key)) throw new SchedulerError(404, 'ResourceNotFoundException', `Schedule ${name} does not exist.`);
    const at = AT.exec(input.ScheduleExpression ?? '')?.[1];
    if (!at) throw new SchedulerError(400, 'ValidationException', `Invalid Schedule Expression ${input.ScheduleExpression}: the local stand-in takes at(yyyy-mm-ddThh:mm:ss) only.`);
    if ((input.ScheduleExpressionTimezone ?? 'UTC') !== 'UTC') throw new SchedulerError(400, 'ValidationException', 'The local stand-in takes UTC schedules only.');
    if (!input.FlexibleTimeWindow?.Mode) throw new SchedulerError(400, 'ValidationException', 'FlexibleTimeWindow is required.');
    const target = input.Target ?? {};
    if (!target.RoleArn) throw new SchedulerError(400, 'ValidationException', 'Target.RoleArn is required.');
    if (typeof target.Arn !== 'string' || !this.sqs.queueOfArn(target.Arn)) {
      throw new SchedulerError(400, 'ValidationException', `Target.Arn ${target.Arn} is not a queue of the local SQS stand-in.`);
    }
    const schedule: LocalSchedule = {
      name,
      group,
      expression: input.ScheduleExpression,
      at: new Date(`${at}Z`),
      target: { arn: target.Arn, roleArn: target.RoleArn, input: target.Input ?? '' },
      actionAfterCompletion: input.ActionAfterCompletion ?? 'NONE',
      state: input.State ?? 'ENABLED',
    };
    this.remove(key);
    this.schedules.set(key, schedule);
    if (schedule.state === 'ENABLED') this.arm(key, schedule.at.getTime());
    return schedule;
  }

  private arm(key: string, atMs: number): void {
    const wait = atMs - Date.now();
    const timer = setTimeout(() => (wait > MAX_TIMER_MS ? this.arm(key, atMs) : this.fire(key)), Math.max(0, Math.min(wait, MAX_TIMER_MS)));
    timer.unref();
    this.timers.set(key, timer);
  }

  private fire(key: string): void {
    this.timers.delete(key);
    const schedule = this.schedules.get(key);
    if (!schedule) return;
    try {
      this.sqs.send(this.sqs.queueOfArn(schedule.target.arn)!, schedule.target.input);
    } catch (err) {
      this.failures.push({ schedule: schedule.name, error: (err as Error).message });
    }
    if (schedule.actionAfterCompletion === 'DELETE') this.schedules.delete(key);
  }

  private remove(key: string): void {
    clearTimeout(this.timers.get(key));
    this.timers.delete(key);
    this.schedules.delete(key);
  }

  private key(group: string, name: string): string {
    return `${group}/${name}`;
  }
}
