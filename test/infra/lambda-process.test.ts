/**
 * The local stand-in for a Lambda container (infra/local/lambda/process.ts), which the deployed-mode test runs every
 * function in: a container that times out, exits or is stopped is replaced for the next invocation, as Lambda does,
 * and an invocation never reaches a process on its way out.
 *
 * Prepare: a package of one handler in a temporary directory. Act: invocations around a stop, a time-out and an exit.
 * Assess: each invocation's result (the pid of the process that answered) or its error.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FunctionProcess } from '#infra/local/lambda/process.ts';

const dir = mkdtempSync(join(tmpdir(), 'lambda-process-'));
const pkg = join(dir, 'index.mjs');
writeFileSync(pkg, `export const handler = async (event) => {
  if (event.sleepMs) await new Promise((resolve) => setTimeout(resolve, event.sleepMs));
  if (event.exit) process.exit(3);
  return { pid: process.pid, greeting: process.env.GREETING };
};
`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const container = (timeoutMs = 5_000) =>
  new FunctionProcess({ module: 'http/test/echo', package: pkg, environment: { GREETING: 'hello' }, timeoutMs });
type Answer = { pid: number; greeting: string };

describe('a local Lambda container', () => {
  it('answers with the environment it was configured with, one container for consecutive invocations', async () => {
    const p = container();
    try {
      const first = await p.invoke<Answer>({});
      const second = await p.invoke<Answer>({});
      expect(first.greeting).toBe('hello');
      expect(second.pid).toBe(first.pid);
    } finally {
      await p.stop();
    }
  });

  it('runs an invocation made while it stops in a new container', async () => {
    const p = container();
    try {
      const before = await p.invoke<Answer>({});
      const stopping = p.stop();
      const after = await p.invoke<Answer>({});
      await stopping;
      expect(after.greeting).toBe('hello');
      expect(after.pid).not.toBe(before.pid);
    } finally {
      await p.stop();
    }
  });

  it('fails a timed-out invocation and runs the next one, made at once, in a new container', async () => {
    const p = container(500);
    try {
      const before = await p.invoke<Answer>({});
      const slow = p.invoke({ sleepMs: 5_000 });
      const next = p.invoke<Answer>({});
      await expect(slow).rejects.toMatchObject({ name: 'FunctionError', errorName: 'Sandbox.Timedout' });
      const after = await next;
      expect(after.pid).not.toBe(before.pid);
    } finally {
      await p.stop();
    }
  });

  it('fails an invocation whose process exits and runs the next one in a new container', async () => {
    const p = container();
    try {
      const before = await p.invoke<Answer>({});
      await expect(p.invoke({ exit: true })).rejects.toMatchObject({ errorName: 'Runtime.ExitError' });
      const after = await p.invoke<Answer>({});
      expect(after.pid).not.toBe(before.pid);
    } finally {
      await p.stop();
    }
  });
});
