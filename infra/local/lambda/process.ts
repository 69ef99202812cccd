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

interface Pending { child: ChildProcess; resolve: (v: unknown) => void; reject: (e: unknown) => void; timer: NodeJS.Timeout }

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
      this.settle(m.id!);
      if (m.error) p.reject(new FunctionError(this.name, m.error.name, m.error.message, m.error.stack));
      else p.resolve(m.result);
    });
    // A process that cannot be started or written to fails the invocations it holds, not the caller's process.
    child.on('error', (err) => this.fail(child, 'Runtime.ExitError', err.message));
    child.on('exit', (code) => this.fail(child, 'Runtime.ExitError', `exited with ${code}`));
    return this.ready;
  }

  /** Takes `child` out of service: the next invocation starts a new container, as Lambda does after a time-out. */
  private retire(child: ChildProcess): void {
    if (this.child !== child) return;
    this.child = undefined;
    this.ready = undefined;
  }

  private settle(id: number): void {
    clearTimeout(this.pending.get(id)?.timer);
    this.pending.delete(id);
  }

  /** Rejects what `child` still holds (only its own invocations: a retired container may exit after a new one started). */
  private fail(child: ChildProcess, errorName: string, message: string): void {
    this.retire(child);
    for (const [id, p] of this.pending) {
      if (p.child !== child) continue;
      this.settle(id);
      p.reject(new FunctionError(this.name, errorName, message));
    }
  }

  /** Invokes the function with `event`; resolves with its result, rejects with a FunctionError. */
  invoke<T = unknown>(event: unknown): Promise<T> {
    const run = async () => {
      await this.start();
      const child = this.child!;
      const id = this.nextId++;
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => {
          this.fail(child, 'Sandbox.Timedout', `timed out after ${this.options.timeoutMs} ms`);
          child.kill();
        }, this.options.timeoutMs);
        this.pending.set(id, { child, resolve: resolve as (v: unknown) => void, reject, timer });
        child.send({ id, event, functionName: this.name, timeoutMs: this.options.timeoutMs }, (err) => {
          if (err) this.fail(child, 'Runtime.ExitError', err.message);
        });
      });
    };
    const result = this.queue.then(run, run);
    this.queue = result.catch(() => undefined);
    return result;
  }

  /** Stops the container; an invocation made meanwhile starts a new one. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.retire(child);
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill();
    });
  }
}
