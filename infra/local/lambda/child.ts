/**
 * One Lambda function in a process of its own, as the Lambda service runs it: the process starts with exactly the
 * environment the function was given (see process.ts), loads the function's package once (the cold start) and then
 * answers invocations one at a time, sent by the parent over IPC.
 */
import { isAbsolute } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Context } from 'aws-lambda';

type Handler = (event: unknown, context: Context) => Promise<unknown>;

interface Invocation { id: number; event: unknown; functionName: string; timeoutMs: number }

const entry = process.argv[2];
if (!entry || !isAbsolute(entry)) throw new Error('usage: child.ts <absolute path of a built index.mjs>');
const loaded: Promise<Handler> = import(pathToFileURL(entry).href).then((m) => m.handler as Handler);

const context = (inv: Invocation, started: number): Context => ({
  callbackWaitsForEmptyEventLoop: false,
  functionName: inv.functionName,
  functionVersion: '$LATEST',
  invokedFunctionArn: `arn:aws:lambda:${process.env.AWS_REGION ?? 'us-east-1'}:000000000000:function:${inv.functionName}`,
  memoryLimitInMB: process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE ?? '256',
  awsRequestId: `${process.pid}-${inv.id}`,
  logGroupName: `/aws/lambda/${inv.functionName}`,
  logStreamName: 'local',
  getRemainingTimeInMillis: () => Math.max(0, inv.timeoutMs - (Date.now() - started)),
  done: () => undefined,
  fail: () => undefined,
  succeed: () => undefined,
});

const serialise = (err: unknown) => ({ name: (err as Error)?.name ?? 'Error', message: (err as Error)?.message ?? String(err), stack: (err as Error)?.stack });

process.on('message', async (inv: Invocation) => {
  const started = Date.now();
  try {
    const handler = await loaded;
    const result = await handler(inv.event, context(inv, started));
    process.send!({ id: inv.id, result: result ?? null });
  } catch (err) {
    process.send!({ id: inv.id, error: serialise(err) });
  }
});
process.send!({ ready: true });
