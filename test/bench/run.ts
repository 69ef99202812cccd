/**
 * `npm run bench [-- --quick] [-- --only name,name]`: every speed and memory target, each figure printed
 * beside its baseline measured in the same run and the ratio between them. Writes bench-results.json and
 * exits non-zero when a target ratio is missed.
 *
 * `npm run bench -- --scale` (or `--scale=N`, or SCALE_CONTACTS=N) runs only segments-scale.ts: dynamic segments
 * at 1,000,000 contacts (N) loaded into DynamoDB Local (in memory, heap BENCH_SCALE_HEAP, 14g by default: 1M
 * contacts and their counters ran in it on 2026-11-26); it writes bench-scale-results.json.
 *
 * Benchmark modules are the files `test/bench/*.bench.ts`; each exports `run(options)` (see types.ts).
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpus, totalmem } from 'node:os';
import { freePort } from '#infra/local/free-port.ts';
import { spawn } from 'node:child_process';
import type { BenchFigure } from './types.ts';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const onlyArg = args.find((a) => a.startsWith('--only='))?.slice(7) ?? (args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined);
const only = onlyArg?.split(',');
const scaleArg = args.find((a) => a === '--scale' || a.startsWith('--scale='));
const scaleSize = scaleArg ? Number(scaleArg.split('=')[1] ?? process.env.SCALE_CONTACTS ?? 1_000_000) : undefined;
if (scaleSize !== undefined && !(Number.isInteger(scaleSize) && scaleSize >= 10_000)) throw new Error('--scale=N: N is a whole number of contacts, at least 10000');


process.env.NODE_ENV = 'bench';
process.env.LOG_LEVEL = 'SILENT';
process.env.TABLE_NAME = 'wa-crm-bench';
process.env.AWS_REGION ??= 'us-east-1';
process.env.AWS_ACCESS_KEY_ID ??= 'local';
process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
process.env.ALLOW_PRIVATE_TARGETS = '1';

const { startDynamo } = await import('../../infra/local/dynamo.ts');

const modules = scaleSize !== undefined ? ['segments-scale.bench.ts'] : readdirSync(here)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => !only || only.includes(f.replace('.bench.ts', '')))
  .sort();

const figures: (BenchFigure & { module: string; pass?: boolean })[] = [];
const failures: string[] = [];
const started = Date.now();
/**
 * One module in its own process (own configuration, own module state) with a DynamoDB Local of its own, so
 * that no module measures another's leftovers (100k contacts, a heap to collect, a JIT warmed for other work).
 */
const runModule = async (name: string): Promise<BenchFigure[]> => {
  // --scale keeps DynamoDB Local in memory with a larger heap: at the JVM's default (a quarter of RAM, 6 GB here) 300k
  // contacts and their counters fill it and it spends its time collecting; on disk (-dbPath) it loads 10x slower.
  if (scaleSize !== undefined) process.env.JAVA_TOOL_OPTIONS = `-Xmx${process.env.BENCH_SCALE_HEAP ?? '14g'}`;
  const dynamo = await startDynamo(await freePort());
  try {
    return await runModuleOn(name, dynamo.endpoint);
  } finally {
    await dynamo.stop();
  }
};

const runModuleOn = (name: string, endpoint: string) =>
  new Promise<BenchFigure[]>((resolve, reject) => {
    const mode = scaleSize !== undefined ? `scale=${scaleSize}` : quick ? 'quick' : 'full';
    const child = spawn(process.execPath, ['--import', 'tsx', join(here, 'run-one.ts'), name, mode], {
      env: { ...process.env, DYNAMODB_ENDPOINT: endpoint, TABLE_NAME: `wa-crm-bench-${name}`, NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS ?? '' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('BENCH_RESULT '));
      if (line) resolve(JSON.parse(line.slice('BENCH_RESULT '.length)));
      else reject(new Error(`exited with ${code}\n${out.slice(-3000)}`));
    });
  });

for (const file of modules) {
  const name = file.replace('.bench.ts', '');
  process.stdout.write(`running ${name}${scaleSize !== undefined ? ` (${scaleSize} contacts)` : quick ? ' (quick)' : ''}...\n`);
  try {
    for (const f of await runModule(name)) {
      const ratio = f.ratio ?? (f.baseline ? f.value / f.baseline : undefined);
      let pass: boolean | undefined;
      if (ratio !== undefined && f.target?.maxRatio !== undefined) pass = ratio <= f.target.maxRatio;
      if (ratio !== undefined && f.target?.minRatio !== undefined) pass = ratio >= f.target.minRatio;
      figures.push({ ...f, module: name, ratio, pass });
      if (pass === false) failures.push(`${f.name}: ratio ${ratio!.toFixed(2)} misses target ${JSON.stringify(f.target)}`);
    }
  } catch (err) {
    failures.push(`${name}: ${(err as Error).stack ?? err}`);
  }
}

const fmt = (n: number | undefined, unit = '') => (n === undefined ? '' : `${n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2)}${unit ? ` ${unit}` : ''}`);
const rows = figures.map((f) => [
  f.name,
  `${fmt(f.value, f.unit)}${f.spread !== undefined ? ` ±${fmt(f.spread / 2)}` : ''}`,
  f.baseline !== undefined ? `${fmt(f.baseline, f.unit)} (${f.baselineName ?? 'baseline'})` : '',
  f.ratio !== undefined ? `${f.ratio.toFixed(2)}x` : '',
  f.target ? (f.target.maxRatio !== undefined ? `≤ ${f.target.maxRatio}x` : `≥ ${f.target.minRatio}x`) : '',
  f.pass === undefined ? '' : f.pass ? 'ok' : 'MISSED',
]);
const header = ['figure', 'value', 'baseline', 'ratio', 'target', ''];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
console.log(`\nMachine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}${scaleSize !== undefined ? `, --scale=${scaleSize}` : quick ? ', --quick' : ''}, ${new Date().toISOString().slice(0, 10)}\n`);
console.log(line(header));
console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
for (const r of rows) console.log(line(r));
for (const f of figures.filter((x) => x.note)) console.log(`- ${f.name}: ${f.note}`);
console.log(`\n${figures.length} figures in ${((Date.now() - started) / 1000).toFixed(0)} s`);

writeFileSync(scaleSize !== undefined ? 'bench-scale-results.json' : 'bench-results.json', JSON.stringify({ quick, scale: scaleSize, machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version }, figures, failures }, null, 2));
if (failures.length) {
  console.error(`\n${failures.length} target(s) missed or failed:\n- ${failures.join('\n- ')}`);
  process.exit(1);
}
process.exit(0);
