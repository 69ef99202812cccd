/**
 * What the Lambda runtime hands a handler besides its event, for the local runtime's in-process invocations (the API
 * server, the queue pump, the clock, the tests' `invoke`). A function in a process of its own builds its context in
 * child.ts, which loads nothing of ours.
 */
import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';
import type { Route, Worker } from '#shared/routes.ts';
import { LOCAL_ACCOUNT, LOCAL_REGION } from '../aws/sqs.ts';

/** A handler module's function name: `http/team/list` → `http-team-list`. */
export const functionNameOf = (module: string): string => module.replace(/\//g, '-');

/** The context of one invocation of `functionName`, which may run `timeoutMs` from now with `memoryMb`. */
export function lambdaContext(functionName: string, { memoryMb = 256, timeoutMs = 60_000 }: { memoryMb?: number; timeoutMs?: number } = {}): Context {
  const started = Date.now();
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${LOCAL_REGION}:${LOCAL_ACCOUNT}:function:${functionName}`,
    memoryLimitInMB: String(memoryMb),
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, timeoutMs - (Date.now() - started)),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** The context of a route's function, with its memory and time-out as deployed (infra/functions.ts defaults: 256 MB, 10 s). */
export const routeContext = (route: Route): Context =>
  lambdaContext(functionNameOf(route.handler), { memoryMb: route.memoryMb ?? 256, timeoutMs: (route.timeoutSeconds ?? 10) * 1000 });

/** The context of a queue worker's function, with its memory and time-out as deployed. */
export const workerContext = (worker: Worker): Context =>
  lambdaContext(functionNameOf(worker.handler), { memoryMb: worker.memoryMb, timeoutMs: worker.timeoutSeconds * 1000 });
