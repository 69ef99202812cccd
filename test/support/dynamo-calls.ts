/**
 * Counts the DynamoDB requests of one piece of work: a middleware on the table client's stack records every
 * call made inside `measure(...)` (an AsyncLocalStorage context), with its start and end, so that work running
 * meanwhile elsewhere in the process (queue workers, other requests) is not counted. Calls made outside any
 * measured context are counted apart (`background`), so a caller can report what workers did per request.
 *
 * Sequential round trips: the longest chain of calls each of which started after the previous one ended
 * (calls that overlap are one round trip), optionally only among calls that started before a given time.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

export interface Call {
  command: string;
  /** The command's input as sent (table name, key, ConsistentRead...). */
  input: Record<string, any>;
  start: number;
  end: number;
}

export interface Measured<T> {
  result: T;
  calls: Call[];
  /** Marks (e.g. the upstream call's start) recorded with `mark` during the work. */
  marks: Record<string, number>;
}

interface Context {
  calls: Call[];
  marks: Record<string, number>;
}

const als = new AsyncLocalStorage<Context>();
const installed = new WeakSet<object>();
export const background: Call[] = [];

/** Installs the counting middleware once per client. */
export function countCalls(client: DynamoDBClient): void {
  if (installed.has(client)) return;
  installed.add(client);
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const into = als.getStore()?.calls ?? background;
      const call: Call = { command: String(context.commandName ?? 'unknown'), input: (args as { input: Record<string, any> }).input, start: performance.now(), end: NaN };
      try {
        return await next(args);
      } finally {
        call.end = performance.now();
        into.push(call);
      }
    },
    { step: 'initialize', name: 'countDynamoCalls' },
  );
}

export async function measure<T>(work: () => Promise<T>): Promise<Measured<T>> {
  const context: Context = { calls: [], marks: {} };
  const result = await als.run(context, work);
  return { result, calls: context.calls, marks: context.marks };
}

/** Records a named moment of the measured work (first one wins). */
export function mark(name: string): void {
  const context = als.getStore();
  if (context && context.marks[name] === undefined) context.marks[name] = performance.now();
}

/** The longest chain of calls in sequence, among the calls that started before `before` (all by default). */
export function sequentialRounds(calls: Call[], before = Infinity): number {
  const considered = calls.filter((c) => c.start < before).sort((a, b) => a.start - b.start);
  const depth: number[] = [];
  considered.forEach((c, i) => {
    let deepest = 0;
    for (let j = 0; j < i; j++) if (considered[j].end <= c.start) deepest = Math.max(deepest, depth[j]);
    depth[i] = deepest + 1;
  });
  return Math.max(0, ...depth);
}
