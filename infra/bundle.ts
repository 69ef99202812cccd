/**
 * Every function's deployment package, each built in an esbuild pass of its own with code splitting: `index.mjs`
 * (exporting `handler`) and, under `chunks/`, what it loads. A module the function reaches only through `import()`
 * (its own or a dependency's) becomes a chunk that is neither parsed nor evaluated at cold start, and that shares
 * everything it has in common with the rest of the bundle (the SDK core above all) through shared chunks, which
 * index.mjs imports statically. A pass of its own per function, so that a package holds exactly its own chunks
 * (no name can collide with another function's) and its static imports are a few chunks, not a chain of the many
 * that splitting ~70 functions in one pass would cut. The media worker keeps sharp and ffmpeg external and ships
 * their native builds beside its bundle.
 *
 * The stack deploys exactly these directories, and infra/needs.ts derives each function's settings and grants from
 * the inputs of every output in its package (chunks included), so what the template gives a function and the code
 * it runs come from one build. Built once per process (a synth, a test run) into the cloud assembly
 * (`cdk.out/.bundles`), from where CDK stages each package as the function's asset; with `BUNDLE_CACHE_DIR` set, a
 * build of the very same sources is copied from there instead (see buildKey).
 */
import { buildSync, type BuildOptions, type Metafile } from 'esbuild';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { bundling } from './bundling.ts';

export interface FunctionBundle {
  handler: string;
  /** The deployment package: `index.mjs` (exporting `handler`), its chunks, source maps, and any files shipped beside it. */
  dir: string;
  /** The source files (project-relative paths) that contribute code to the package (every chunk included). */
  inputs: string[];
  /** The files a cold start loads: `index.mjs` and the chunks it imports statically, transitively (absolute paths). */
  initFiles: string[];
}

export interface BundleRequest {
  handler: string;
  /** Only the media worker: sharp and ffmpeg stay external and their installed (x64) packages are copied beside it. */
  nativeMedia?: boolean;
  /** Files copied next to `index.mjs` (absolute source path → file name). */
  extraFiles?: Record<string, string>;
}

const cache = new Map<string, Map<string, FunctionBundle>>();

/** Where a package keeps its chunks, beside index.mjs. */
export const CHUNK_DIR = 'chunks';

/**
 * The esbuild options of a package (infra/bundling.ts): `index.mjs` from `entry`, its chunks under CHUNK_DIR. Every
 * function is built with them, and so is the cold-start bench's baseline (test/bench/coldstart.bench.ts).
 */
export const packageBuildOptions = (root: string, entry: string, outdir: string, splitting: boolean) => ({
  entryPoints: { index: entry },
  outdir,
  bundle: true,
  format: bundling.format,
  splitting,
  chunkNames: `${CHUNK_DIR}/[name]-[hash]`,
  platform: bundling.platform,
  target: bundling.target,
  minify: bundling.minify,
  sourcemap: bundling.sourcemap,
  sourcesContent: bundling.sourcesContent,
  mainFields: bundling.mainFields,
  banner: { js: bundling.banner },
  alias: bundling.alias,
  outExtension: { '.js': '.mjs' },
  metafile: true,
  absWorkingDir: root,
}) satisfies BuildOptions;

/** One function's package: an esbuild pass with the options every function is built with. */
export function buildPackage(root: string, dir: string, entry: string, external: string[], write: boolean): Metafile {
  const { metafile, warnings } = buildSync({ ...packageBuildOptions(root, entry, dir, bundling.splitting), external, write, logLevel: 'error' });
  // package.json declares the project's modules free of import side effects ("sideEffects": false), so that a bundle
  // leaves out every module none of whose exports it uses; an import kept for its side effects alone would vanish.
  const dropped = warnings.filter((w) => w.id === 'ignored-bare-import');
  if (dropped.length) throw new Error(`imports for side effects alone are dropped from bundles; import and call what they do: ${dropped.map((w) => `${w.location?.file}:${w.location?.line}`).join(', ')}`);
  return metafile!;
}

/**
 * The outputs `start` loads (absolute paths, `start` first): through static imports only (what a cold start loads),
 * or through dynamic ones too (everything the package must hold). Paths in the metafile are relative to `root`.
 */
export function reachableOutputs(metafile: Metafile, root: string, start: string, { dynamic }: { dynamic: boolean }): string[] {
  const outputs = new Map(Object.entries(metafile.outputs).map(([file, output]) => [resolve(root, file), output]));
  const seen = new Set([start]);
  const queue = [start];
  while (queue.length) {
    const output = outputs.get(queue.pop()!);
    if (!output) throw new Error(`esbuild's metafile has no output ${start}`);
    for (const i of output.imports) {
      if (i.external || !(i.kind === 'import-statement' || (dynamic && i.kind === 'dynamic-import'))) continue;
      const file = resolve(root, i.path);
      if (!seen.has(file)) {
        seen.add(file);
        queue.push(file);
      }
    }
  }
  return [...seen];
}

/** The inputs that put bytes into any of these outputs (tree-shaken modules do not count). */
const contributingInputs = (metafile: Metafile, root: string, files: string[]): string[] => {
  const inputs = new Set<string>();
  for (const [file, output] of Object.entries(metafile.outputs)) {
    if (!files.includes(resolve(root, file))) continue;
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) if (bytesInOutput > 0) inputs.add(input);
  }
  return [...inputs];
};

function bundleFunction(root: string, outdir: string, request: BundleRequest, write: boolean): FunctionBundle {
  const dir = join(outdir, request.handler);
  const metafile = buildPackage(root, dir, join(root, 'functions', `${request.handler}.ts`), request.nativeMedia ? bundling.nativeMediaModules : [], write);
  const index = join(dir, 'index.mjs');
  if (!Object.keys(metafile.outputs).some((file) => resolve(root, file) === index)) throw new Error(`esbuild produced no bundle for functions/${request.handler}.ts`);
  const all = reachableOutputs(metafile, root, index, { dynamic: true });
  // esbuild emits a chunk for every `import()` it meets, even one in code it then leaves out as unused (the SDK's
  // browser user-agent parser): no output loads such a chunk, so the package does without it.
  const dead = Object.keys(metafile.outputs).map((file) => resolve(root, file)).filter((file) => !file.endsWith('.map') && !all.includes(file));
  if (write) for (const file of dead) for (const f of [file, `${file}.map`]) rmSync(f, { force: true });
  return { handler: request.handler, dir, inputs: contributingInputs(metafile, root, all), initFiles: reachableOutputs(metafile, root, index, { dynamic: false }) };
}

/** The media worker's native binaries for its Lambda architecture (x86_64), which npm installs only on a linux x64 machine. */
const LAMBDA_MEDIA_BINARIES = ['@img/sharp-linux-x64', '@img/sharp-libvips-linux-x64', '@ffmpeg-installer/linux-x64'];

/** Throws, saying how to deploy, when `npm ci` ran on a machine that did not install the media worker's Lambda binaries. */
export function requireLambdaMediaBinaries(root: string): void {
  const missing = LAMBDA_MEDIA_BINARIES.filter((pkg) => !existsSync(join(root, 'node_modules', pkg, 'package.json')));
  if (missing.length === 0) return;
  throw new Error(
    `The media worker runs on Lambda's linux x64, and ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not installed: npm installs ` +
    `them only on a linux x64 machine (this one is ${process.platform} ${process.arch}). Synthesize and deploy from linux x64: ` +
    `AWS CloudShell, a linux x64 CI runner, or a container (docker run --platform linux/amd64 -v "$PWD":/app -w /app node:22 ` +
    `sh -c 'npm ci && npx cdk deploy', with your AWS credentials passed in).`,
  );
}

/** The installed native media packages, copied as the media worker's node_modules (x64 Linux builds). */
const copyNativeMedia = (root: string, dir: string) => {
  requireLambdaMediaBinaries(root);
  const modules = join(root, 'node_modules');
  for (const pkg of ['sharp', '@img', 'detect-libc', 'semver', '@ffmpeg-installer/ffmpeg', '@ffmpeg-installer/linux-x64']) {
    cpSync(join(modules, pkg), join(dir, 'node_modules', pkg), { recursive: true, dereference: true });
  }
};

/**
 * Builds into `outdir` (once per process, output directory and set of requests) and returns each handler's package.
 * `write: false` (a synth that skips bundling, `-c aws:cdk:bundling-stacks=[]`) still derives the inputs, but leaves
 * the packages empty.
 */
export function bundleFunctions(root: string, requests: BundleRequest[], outdirGiven: string, { write = true } = {}): Map<string, FunctionBundle> {
  // The CDK CLI hands the app a relative cloud assembly directory (`CDK_OUTDIR=cdk.out`); esbuild's outputs are
  // compared as absolute paths.
  const outdir = resolve(outdirGiven);
  const key = JSON.stringify([root, requests, outdir, write]);
  const cached = cache.get(key);
  if (cached) return cached;
  rmSync(outdir, { recursive: true, force: true }); // no file of an earlier build may end up in a package
  const kept = process.env.BUNDLE_CACHE_DIR ? join(process.env.BUNDLE_CACHE_DIR, buildKey(root, requests, outdir, write)) : undefined;
  const bundles = kept ? reuseOrBuildAndKeep(kept, () => build(root, requests, outdir, write), outdir) : build(root, requests, outdir, write);
  cache.set(key, bundles);
  return bundles;
}

function build(root: string, requests: BundleRequest[], outdir: string, write: boolean): Map<string, FunctionBundle> {
  const bundles = new Map<string, FunctionBundle>();
  for (const request of requests) {
    const bundle = bundleFunction(root, outdir, request, write);
    bundles.set(request.handler, bundle);
    mkdirSync(bundle.dir, { recursive: true });
    if (!write) continue;
    if (request.nativeMedia) copyNativeMedia(root, bundle.dir);
    for (const [from, name] of Object.entries(request.extraFiles ?? {})) cpSync(from, join(bundle.dir, name));
  }
  return bundles;
}

/*
 * Builds kept between processes (`BUNDLE_CACHE_DIR`, optional; the test run sets it, so that the infra test and the
 * deployed-mode test, each a synth of its own, bundle once between them). A build is reused only when everything it is
 * made from is byte for byte the same: the requests, every file under functions/, shared/ and infra/ (the sources and
 * the build options), the files copied beside a handler, the lock file (the dependencies), and the output directory's
 * place relative to the sources (the source maps' paths).
 */
const SOURCE_DIRS = ['functions', 'shared', 'infra'];

function buildKey(root: string, requests: BundleRequest[], outdir: string, write: boolean): string {
  const hash = createHash('sha256').update(JSON.stringify({ requests, write, sources: relative(outdir, root) }));
  const files = SOURCE_DIRS.flatMap((dir) => readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' }).map((file) => join(dir, file)));
  for (const file of [...files.sort(), 'package-lock.json']) {
    if (statSync(join(root, file)).isFile()) hash.update(file).update(readFileSync(join(root, file)));
  }
  for (const from of requests.flatMap((r) => Object.keys(r.extraFiles ?? {}))) hash.update(from).update(readFileSync(from));
  return hash.digest('hex').slice(0, 32);
}

interface KeptBundle { handler: string; inputs: string[]; initFiles: string[] }
const MANIFEST = 'bundles.json';

/** A kept build copied into `outdir`, or undefined when there is none. */
function reuse(kept: string, outdir: string): Map<string, FunctionBundle> | undefined {
  if (!existsSync(join(kept, MANIFEST))) return undefined;
  cpSync(join(kept, 'packages'), outdir, { recursive: true });
  const manifest = JSON.parse(readFileSync(join(kept, MANIFEST), 'utf8')) as KeptBundle[];
  return new Map(manifest.map((b) => [b.handler, { ...b, dir: join(outdir, b.handler), initFiles: b.initFiles.map((f) => join(outdir, f)) }]));
}

/** How long a process waits for another that is building the same sources before it builds them itself. */
const BUILDER_WAIT_MS = 5 * 60_000;
const sleepSync = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * The kept build, or a new one, kept: one process builds (it holds `<kept>.lock`, made atomically), the others that
 * want the same sources meanwhile wait for its build rather than make their own (the test run's two synths start
 * together). A builder that died leaves its lock: past BUILDER_WAIT_MS the others build for themselves.
 */
function reuseOrBuildAndKeep(kept: string, build: () => Map<string, FunctionBundle>, outdir: string): Map<string, FunctionBundle> {
  const lock = `${kept}.lock`;
  mkdirSync(dirname(kept), { recursive: true });
  for (const waitUntil = Date.now() + BUILDER_WAIT_MS; ; sleepSync(250)) {
    const reused = reuse(kept, outdir);
    if (reused) return reused;
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (Date.now() > waitUntil) return build();
    }
  }
  try {
    const bundles = reuse(kept, outdir) ?? build(); // kept by the holder before ours, between our look and our lock
    if (existsSync(kept)) return bundles;
    keep(bundles, outdir, kept);
    return bundles;
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** Keeps a build for other processes: written beside, then renamed into place (another process may be keeping the same). */
function keep(bundles: Map<string, FunctionBundle>, outdir: string, kept: string): void {
  const staging = `${kept}.${process.pid}`;
  cpSync(outdir, join(staging, 'packages'), { recursive: true });
  const manifest: KeptBundle[] = [...bundles.values()].map((b) => ({ handler: b.handler, inputs: b.inputs, initFiles: b.initFiles.map((f) => relative(outdir, f)) }));
  writeFileSync(join(staging, MANIFEST), JSON.stringify(manifest));
  try {
    renameSync(staging, kept);
  } catch {
    rmSync(staging, { recursive: true, force: true }); // kept meanwhile by another process
  }
}
