/**
 * The README's curl examples work: every ```sh block with `curl` in the developer-experience section runs,
 * in order, in bash against a local stack with the demo key (BASE, KEY, AUTH, JSON and SANDBOX set as the
 * README says), and exits 0. The examples use `curl -fsS`, so any non-2xx answer fails its block.
 * Exported variables (ids kept with jq) carry over from one block to the next, as in one terminal.
 * `jq` is the test's own (test/support/jq/jq, in Node): the test runs wherever `npm ci` ran, and never skips.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { startTestStack, type LocalStack } from '../support/stack.ts';

const readme = readFileSync('README.md', 'utf8');
const start = readme.indexOf('<!-- AREA EXAMPLES');
const end = readme.indexOf('<!-- /AREA EXAMPLES -->');
const section = start >= 0 && end > start ? readme.slice(start, end) : '';
const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]).filter((b) => /\bcurl\b/.test(b));
/** The typed client's example, run as the README says: a file in the project's root, with `npx tsx`. */
const nodeExample = /#### From Node[\s\S]*?```ts\n([\s\S]*?)```/.exec(section)?.[1] ?? '';

/** First on the blocks' PATH: the jq the examples use, whether or not the machine has one. */
const JQ_SHIM = resolve('test/support/jq');

it('finds the examples section, its curl blocks and the typed client example', () => {
  expect(section).not.toBe('');
  expect(blocks.length).toBeGreaterThanOrEqual(10);
  expect(nodeExample).toContain('WaCrmClient');
});

describe('README curl examples', () => {
  let stack: LocalStack;
  const dir = mkdtempSync(join(tmpdir(), 'readme-'));
  const state = join(dir, '.state.sh');

  beforeAll(async () => {
    stack = await startTestStack({ demo: true, queueRetryDelayMs: 50 });
    execFileSync('bash', ['-c', `: > ${state}`]);
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each(blocks.map((b, i) => [i + 1, b.split('\n').find((l) => l.includes('curl'))!.trim().slice(0, 80), b]))('block %i runs: %s', async (_i, _title, block) => {
    // Prepare: the variables the README's setup exports, plus what earlier blocks exported
    const env = {
      PATH: `${JQ_SHIM}${delimiter}${process.env.PATH!}`,
      HOME: dir,
      BASE: stack.url,
      KEY: stack.demo!.apiKey,
      AUTH: `Authorization: Bearer ${stack.demo!.apiKey}`,
      JSON: 'Content-Type: application/json',
      SANDBOX: stack.sandboxUrl,
      TO: '+5215512345678',
    };
    const script = `set -eo pipefail\nsource ${state}\n${block}\nexport -p | grep -E '^declare -x [A-Z_]+=' > ${state}\n`;
    // Act: run asynchronously, so the stack in this process keeps serving
    const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      import('node:child_process').then(({ execFile }) => {
        execFile('bash', ['-c', script], { cwd: dir, env, timeout: 60_000, maxBuffer: 10 * 1024 * 1024 }, (err, stdout, stderr) =>
          resolve({ code: err ? ((err as any).code ?? 1) : 0, stdout, stderr }));
      });
    });
    // Assess
    // On failure the diff shows the block's output (curl -fsS prints the failing status on stderr).
    expect({ exit: result.code, output: result.code === 0 ? '' : `${result.stdout}\n${result.stderr}`.slice(-3000) }).toEqual({ exit: 0, output: '' });
  }, 90_000);

  it('runs the typed client example with `npx tsx` from the project root', async () => {
    // Prepare
    const file = resolve(`.readme-app-${process.pid}.ts`);
    writeFileSync(file, nodeExample);
    try {
      // Act
      const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
        import('node:child_process').then(({ execFile }) => {
          execFile('npx', ['tsx', file], { env: { ...process.env, BASE: stack.url, KEY: stack.demo!.apiKey, NODE_OPTIONS: '' }, timeout: 60_000 }, (err, stdout, stderr) =>
            done({ code: err ? ((err as any).code ?? 1) : 0, stdout, stderr }));
        });
      });
      // Assess
      expect({ exit: result.code, stdout: result.stdout, stderr: result.code === 0 ? '' : result.stderr.slice(-2000) }).toEqual({ exit: 0, stdout: expect.stringMatching(/^sent to [0-9a-f-]{36}\n$/), stderr: '' });
    } finally {
      rmSync(file, { force: true });
    }
  }, 90_000);
});
