/**
 * Cold start: every HTTP function is bundled exactly as CDK bundles it (infra/bundling.ts), then a fresh
 * Node process loads the bundle and runs its init; the same for a baseline bundle that only creates a
 * DynamoDB document client and returns 200, timed in turns with each function. Target: each HTTP
 * function ≤ 1.3x the baseline. Also checks
 * that no HTTP bundle carries sharp or ffmpeg, and reports bundle sizes.
 */
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { routes } from '#shared/routes.ts';
import { bundling } from '#infra/bundling.ts';
import type { BenchFigure, BenchOptions } from './types.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');

async function bundle(entry: string, outdir: string): Promise<{ file: string; bytes: number; inputs: string[] }> {
  const result = await build({
    entryPoints: [entry],
    outdir,
    bundle: true,
    format: bundling.format,
    platform: bundling.platform,
    target: bundling.target,
    minify: bundling.minify,
    sourcemap: false,
    mainFields: bundling.mainFields,
    banner: { js: bundling.banner },
    outExtension: { '.js': '.mjs' },
    metafile: true,
    logLevel: 'silent',
    absWorkingDir: root,
  });
  const file = Object.keys(result.metafile.outputs).find((f) => f.endsWith('.mjs'))!;
  return { file: join(root, file), bytes: statSync(join(root, file)).size, inputs: Object.keys(result.metafile.inputs) };
}

/** Init time (ms) of one fresh process: import the bundle (module load + init code). */
function initOnce(file: string): number {
  const script = `const t=performance.now();await import(${JSON.stringify(file)});process.stdout.write(String(performance.now()-t));`;
  return Number(execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...process.env, NODE_OPTIONS: '', AWS_REGION: 'us-east-1', TABLE_NAME: 't', LOG_LEVEL: 'SILENT' },
  }).toString());
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * Median init times of a bundle and of the baseline over `runs` fresh processes each, taken in turns
 * (baseline, bundle, baseline, bundle...), so that the machine's drift over the run (other load, CPU
 * frequency) weighs on both sides of each ratio alike. A first pair warms the file cache.
 */
function pairedInitTimes(file: string, baselineFile: string, runs: number): { median: number; spread: number; baseline: number } {
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
  return { median: median(samples), spread: Math.max(...samples) - Math.min(...samples), baseline: median(base) };
}

export async function run({ quick }: BenchOptions): Promise<BenchFigure[]> {
  const dir = mkdtempSync(join(tmpdir(), 'coldstart-'));
  const runs = quick ? 3 : 7;
  const baseline = await bundle(join(root, 'test/bench/baseline-handler.ts'), join(dir, 'baseline'));

  const figures: BenchFigure[] = [];
  const handlers = [...new Set(routes.map((r) => r.handler))];
  const selected = quick ? handlers.filter((_, i) => i % 4 === 0) : handlers;
  const sizes: string[] = [];
  for (const handler of selected) {
    const b = await bundle(join(root, 'functions', `${handler}.ts`), join(dir, handler.replace(/\//g, '-')));
    const native = b.inputs.filter((i) => /node_modules\/(sharp|@img|@ffmpeg-installer)\//.test(i));
    if (native.length) throw new Error(`${handler} bundles native media modules: ${native.slice(0, 3).join(', ')}`);
    const t = pairedInitTimes(b.file, baseline.file, runs);
    sizes.push(`${handler} ${(b.bytes / 1024).toFixed(0)} KB`);
    figures.push({
      name: `cold start: ${handler}`,
      value: t.median,
      spread: t.spread,
      unit: 'ms',
      baseline: t.baseline,
      baselineName: 'DynamoDB client only',
      target: { maxRatio: 1.3 },
    });
  }
  figures.push({
    name: 'bundle size: baseline',
    value: baseline.bytes,
    unit: 'bytes',
    note: `KB per HTTP bundle (minified ESM, SDK bundled): ${sizes.join('; ')}${quick ? ' (quick: every 4th handler)' : ''}`,
  });
  return figures;
}
