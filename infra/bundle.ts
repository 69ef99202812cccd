/**
 * Every function's deployment package, built in one esbuild pass (two: the media worker keeps sharp and ffmpeg
 * external and ships their native builds beside its bundle). The stack deploys exactly these directories, and
 * infra/needs.ts derives each function's settings and grants from the same build's metafile, so what the template
 * gives a function and the code it runs come from one build. Built once per process (a synth, a test run) into the
 * cloud assembly (`cdk.out/.bundles`), from where CDK stages each package as the function's asset.
 */
import { buildSync, type Metafile } from 'esbuild';
import { cpSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { bundling } from './bundling.ts';

export interface FunctionBundle {
  handler: string;
  /** The deployment package: `index.mjs` (exporting `handler`), its source map, and any files shipped beside it. */
  dir: string;
  /** The source files (project-relative paths) that contribute code to the bundle. */
  inputs: string[];
}

export interface BundleRequest {
  handler: string;
  /** Only the media worker: sharp and ffmpeg stay external and their installed (x64) packages are copied beside it. */
  nativeMedia?: boolean;
  /** Files copied next to `index.mjs` (absolute source path → file name). */
  extraFiles?: Record<string, string>;
}

const cache = new Map<string, Map<string, FunctionBundle>>();

/** The output file of one entry, and the inputs that put bytes into it (tree-shaken modules do not count). */
const contributingInputs = (metafile: Metafile, outfile: string): string[] =>
  Object.entries(metafile.outputs[outfile]?.inputs ?? {}).filter(([, i]) => i.bytesInOutput > 0).map(([file]) => file);

function buildGroup(root: string, outdir: string, requests: BundleRequest[], external: string[], write: boolean): Map<string, FunctionBundle> {
  const out = new Map<string, FunctionBundle>();
  if (!requests.length) return out;
  const { metafile, warnings } = buildSync({
    entryPoints: Object.fromEntries(requests.map((r) => [`${r.handler}/index`, join(root, 'functions', `${r.handler}.ts`)])),
    outdir,
    bundle: true,
    format: bundling.format,
    platform: bundling.platform,
    target: bundling.target,
    minify: bundling.minify,
    sourcemap: bundling.sourcemap,
    sourcesContent: bundling.sourcesContent,
    mainFields: bundling.mainFields,
    banner: { js: bundling.banner },
    outExtension: { '.js': '.mjs' },
    external,
    metafile: true,
    write,
    absWorkingDir: root,
    logLevel: 'error',
  });
  // package.json declares the project's modules free of import side effects ("sideEffects": false), so that a bundle
  // leaves out every module none of whose exports it uses; an import kept for its side effects alone would vanish.
  const dropped = warnings.filter((w) => w.id === 'ignored-bare-import');
  if (dropped.length) throw new Error(`imports for side effects alone are dropped from bundles; import and call what they do: ${dropped.map((w) => `${w.location?.file}:${w.location?.line}`).join(', ')}`);
  for (const request of requests) {
    const dir = join(outdir, request.handler);
    const outfile = Object.keys(metafile.outputs).find((f) => f.endsWith(`${request.handler}/index.mjs`));
    if (!outfile) throw new Error(`esbuild produced no bundle for functions/${request.handler}.ts`);
    out.set(request.handler, { handler: request.handler, dir, inputs: contributingInputs(metafile, outfile) });
  }
  return out;
}

/** The installed native media packages, copied as the media worker's node_modules (x64 Linux builds). */
const copyNativeMedia = (root: string, dir: string) => {
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
export function bundleFunctions(root: string, requests: BundleRequest[], outdir: string, { write = true } = {}): Map<string, FunctionBundle> {
  const key = JSON.stringify([root, requests, outdir, write]);
  const cached = cache.get(key);
  if (cached) return cached;
  rmSync(outdir, { recursive: true, force: true }); // no file of an earlier build may end up in a package
  const bundles = new Map([
    ...buildGroup(root, outdir, requests.filter((r) => !r.nativeMedia), [], write),
    ...buildGroup(root, outdir, requests.filter((r) => r.nativeMedia), bundling.nativeMediaModules, write),
  ]);
  for (const request of requests) {
    const { dir } = bundles.get(request.handler)!;
    mkdirSync(dir, { recursive: true });
    if (!write) continue;
    if (request.nativeMedia) copyNativeMedia(root, dir);
    for (const [from, name] of Object.entries(request.extraFiles ?? {})) cpSync(from, join(dir, name));
  }
  cache.set(key, bundles);
  return bundles;
}
