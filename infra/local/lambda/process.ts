/**
 * Runs a function's built package the way Lambda does: in a process of its own, started with the
 * function's environment and nothing else of ours (no shared module state with the caller, no environment inherited
 * from the test or the local stack beyond PATH, no module loader), invoked one event at a time. Used to run
 * functions exactly as the synthesized template configures them (infra/local/deployed.ts).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { functionNameOf } from './context.ts';

const childEntry = join(dirname(fileURLToPath(import.meta.url)), 'child.ts');

export class FunctionError extends Error {
  constructor(readonly functionName: string, readonly errorName: string, message: string, readonly remoteStack?: string) {
    super(`${functionName}: ${errorName}: ${message}`);
    this.name = 'FunctionError';
  }
}

interface Pending { resolve: (v: unknown) => void; reject: (e: unknown) => void; timer: NodeJS.Timeout }

export interface FunctionProcessOptions {
  /** Handler module under functions/, e.g. `http/messages/send` (names the function). */
  module: string;
  /** The module's built package: the absolute path of its `index.mjs`, as CDK deploys it. */
  package: string;
  /** The function's whole environment (as Lambda would set it). */
  environment: Record<string, string>;
  timeoutMs: number;
  /** Where the child's stdout/stderr go (default: discarded; `inherit` to see the function's logs). */
  stdio?: 'ignore' | 'inherit';
}

/** One warm container of a function. Lambda runs one invocation per container at a time; so does this. */
export class FunctionProcess {
  private child: ChildProcess | undefined;
  private ready: Promise<void> | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: FunctionProcessOptions) {}

  get name(): string {
    return functionNameOf(this.options.module);
  }

  private start(): Promise<void> {
    if (this.ready) return this.ready;
    const child = fork(childEntry, [this.options.package], {
      // Only what the function is configured with, plus PATH; no loader and none of the parent's Node flags, as in
      // Lambda (child.ts itself needs none: Node 22 strips its types).
      env: { PATH: process.env.PATH ?? '', ...this.options.environment },
      execArgv: [],
      stdio: ['ignore', this.options.stdio ?? 'ignore', this.options.stdio ?? 'ignore', 'ipc'],
    });
    this.child = child;
    this.ready = new Promise<void>((resolve, reject) => {
      const onExit = (code: number | null) => reject(new FunctionError(this.name, 'Runtime.ExitError', `exited with ${code} before it was ready`));
      child.once('exit', onExit);
      child.once('message', () => {
        child.off('exit', onExit);
        resolve();
      });
    });
    child.on('message', (m: { id?: number; result?: unknown; error?: { name: string; message: string; stack?: string } }) => {
      const p = m.id === undefined ? undefined : this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id!);
      clearTimeout(p.timer);
      if (m.error) p.reject(new FunctionError(this.name, m.error.name, m.error.message, m.error.stack));
      else p.resolve(m.result);
    });
    child.on('exit', (code) => {
      for (const [id, p] of this.pending) {
        clearTimeout(p.timer);
        p.reject(new FunctionError(this.name, 'Runtime.ExitError', `exited with ${code}`));
        this.pending.delete(id);
      }
      this.child = undefined;
      this.ready = undefined;
    });
    return this.ready;
  }

  /** Invokes the function with `event`; resolves with its result, rejects with a FunctionError. */
  invoke<T = unknown>(event: unknown): Promise<T> {
    const run = async () => {
      await this.start();
      const id = this.nextId++;
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => {
          this.pending.delete(id);
          reject(new FunctionError(this.name, 'Sandbox.Timedout', `timed out after ${this.options.timeoutMs} ms`));
          this.child?.kill();
        }, this.options.timeoutMs);
        this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer });
        this.child!.send({ id, event, functionName: this.name, timeoutMs: this.options.timeoutMs });
      });
    };
    const result = this.queue.then(run, run);
    this.queue = result.catch(() => undefined);
    return result;
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill();
    });
  }
}
