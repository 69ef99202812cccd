/**
 * Cold start: every HTTP function's deployment package is built exactly as the CDK stack builds it (infra/bundle.ts:
 * index.mjs and its chunks), then a fresh Node process imports index.mjs and runs its init, loading the chunks
 * index.mjs imports statically as Lambda would (the ones it loads with `import()` wait for first use); the same for a
 * baseline bundle (bundleBaseline) that only creates a DynamoDB document client and returns 200, timed in turns with
 * each function. Target: each HTTP function ≤ 1.3x the baseline.
 * Also checks that no HTTP bundle carries sharp or ffmpeg, and reports bundle sizes.
 *
 * The time is the CPU time (user + system, all threads) of the import: what a cold start costs, without the
 * waits for a core that other processes add on a shared machine. The ratio is the median of the ratios of the
 * paired runs (each function run over the baseline run just before it): on a shared machine the same work costs
 * more CPU time in some moments than in others (cache and core contention), and a pair shares its moment. The full
 * run times every function; the quick run the QUICK_COUNT that load the most bytes at init (index.mjs and its static
 * chunks): every byte of them is at least pre-parsed at load, so the largest are the slowest to start, and the same ones are timed in every quick run.
 */
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { routes } from '#shared/routes.ts';
import { bundleFunctions, packageBuildOptions } from '#infra/bundle.ts';
import type { BenchFigure, BenchOptions } from './types.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const QUICK_COUNT = 12;

/** `bytes`: what a cold start loads, index.mjs and the chunks it imports statically. */
interface Bundle { file: string; bytes: number; inputs: string[] }

const sizeOf = (files: string[]) => files.reduce((n, f) => n + statSync(f).size, 0);

/**
 * The baseline: the same esbuild options as every function, except that it is bundled whole, without splitting
 * (infra/bundling.ts), as the 1.3x target was set against it. Split, it would load 221 KB instead of 341 KB (the SDK's
 * credential providers other than the environment's become chunks it never loads) and cost about a fifth less CPU time
 * (a third before node:http went through its shim: the metadata providers' import of it loaded undici).
 */
async function bundleBaseline(outdir: string, { split = false } = {}): Promise<Bundle> {
  const result = await build({ ...packageBuildOptions(root, join(root, 'test/bench/baseline-handler.ts'), outdir, split), logLevel: 'silent' });
  const file = join(outdir, 'index.mjs');
  // What the import loads: index.mjs and the chunks it imports statically (none when bundled whole).
  const init = [file, ...(result.metafile.outputs[Object.keys(result.metafile.outputs).find((o) => o.endsWith('index.mjs'))!]?.imports ?? [])
    .filter((i) => i.kind === 'import-statement' && !i.external).map((i) => join(root, i.path))];
  return { file, bytes: sizeOf(init), inputs: Object.keys(result.metafile.inputs) };
}

/** Every HTTP function's package, as infra/bundle.ts builds it for the stack. */
function bundleHandlers(handlers: string[], outdir: string): Map<string, Bundle> {
  const packages = bundleFunctions(root, handlers.map((handler) => ({ handler })), outdir);
  return new Map(handlers.map((handler) => {
    const { dir, inputs, initFiles } = packages.get(handler)!;
    return [handler, { file: join(dir, 'index.mjs'), bytes: sizeOf(initFiles), inputs }];
  }));
}

/** CPU time (ms, user + system) of one fresh process importing the bundle (module load + init code). */
function initOnce(file: string): number {
  const script = `const c=process.cpuUsage();await import(${JSON.stringify(file)});const u=process.cpuUsage(c);process.stdout.write(String((u.user+u.system)/1000));`;
  return Number(execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...process.env, NODE_OPTIONS: '', AWS_REGION: 'us-east-1', TABLE_NAME: 't', LOG_LEVEL: 'SILENT' },
  }).toString());
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * Init times of a bundle and of the baseline over `runs` fresh processes each, taken in turns (baseline, bundle,
 * baseline, bundle...), so that the machine's drift over the run (other load, CPU frequency) weighs on both sides
 * of each ratio alike: medians of each side, and the median of the pairs' ratios. A first pair warms the file cache.
 */
function pairedInitTimes(file: string, baselineFile: string, runs: number): { median: number; spread: number; baseline: number; ratio: number } {
  const samples: number[] = [];
  const base: number[] = [];
  for (let i = 0; i < runs + 1; i++) {
    const b = initOnce(baselineFile);
    const t = initOnce(file);
    if (i > 0) {
      base.push(b);
      samples.push(t);
    }
  }
  const ratios = samples.map((t, i) => t / base[i]);
  return { median: median(samples), spread: Math.max(...samples) - Math.min(...samples), baseline: median(base), ratio: median(ratios) };
}

export async function run({ quick }: BenchOptions): Promise<BenchFigure[]> {
  const runs = quick ? 9 : 7;
  const dir = mkdtempSync(join(tmpdir(), 'coldstart-'));
  const handlers = [...new Set(routes.map((r) => r.handler))];
  const baseline = await bundleBaseline(join(dir, 'baseline'));
  const bundles = bundleHandlers(handlers, join(dir, 'functions'));

  const figures: BenchFigure[] = [];
  const selected = quick ? [...handlers].sort((a, b) => bundles.get(b)!.bytes - bundles.get(a)!.bytes).slice(0, QUICK_COUNT) : handlers;
  for (const handler of handlers) {
    const native = bundles.get(handler)!.inputs.filter((i) => /node_modules\/(sharp|@img|@ffmpeg-installer)\//.test(i));
    if (native.length) throw new Error(`${handler} bundles native media modules: ${native.slice(0, 3).join(', ')}`);
  }
  for (const handler of selected) {
    const t = pairedInitTimes(bundles.get(handler)!.file, baseline.file, runs);
    figures.push({
      name: `cold start: ${handler}`,
      value: t.median,
      spread: t.spread,
      unit: 'ms',
      baseline: t.baseline,
      ratio: t.ratio,
      baselineName: 'DynamoDB client only, CPU',
      target: { maxRatio: 1.3 },
    });
  }
  // The same baseline split as the functions are (informational: the target is set against the whole one).
  const splitBaseline = await bundleBaseline(join(dir, 'baseline-split'), { split: true });
  const split = pairedInitTimes(splitBaseline.file, baseline.file, runs);
  const worst = Math.max(...figures.map((f) => f.ratio ?? 0));
  figures.push({
    name: 'cold start: baseline split like the functions',
    value: split.median,
    spread: split.spread,
    unit: 'ms',
    baseline: split.baseline,
    ratio: split.ratio,
    baselineName: 'DynamoDB client only, bundled whole, CPU',
    note: `${(splitBaseline.bytes / 1024).toFixed(0)} KB loaded at init against ${(baseline.bytes / 1024).toFixed(0)} KB: against it, the worst function timed here reads about ${(worst / split.ratio).toFixed(2)}x (the target is set against the whole baseline)`,
  });
  const sizes = handlers.map((h) => `${h} ${(bundles.get(h)!.bytes / 1024).toFixed(0)} KB`);
  figures.push({
    name: 'bundle size: baseline',
    value: baseline.bytes,
    unit: 'bytes',
    note: `KB loaded at init per HTTP function (index.mjs and its static chunks: minified ESM, SDK bundled; the chunks it loads with import() apart): ${sizes.join('; ')}${quick ? ` (quick: the ${QUICK_COUNT} largest timed)` : ''}`,
  });
  return figures;
}
