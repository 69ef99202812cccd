/**
 * Every function's deployment package, built in one esbuild pass (two: the media worker keeps sharp and ffmpeg
 * external and ships their native builds beside its bundle). The stack deploys exactly these directories, and
 * infra/needs.ts derives each function's settings and grants from the same build's metafile, so what the template
 * gives a function and the code it runs come from one build. Built once per process (a synth, a test run) into the
 * cloud assembly (`cdk.out/.bundles`), from where CDK stages each package as the function's asset.
 *
 * The modules package.json maps under `#side/` are loaded on first use (`import('#side/…')`) and built as bundles
 * of their own (one more pass): a package that imports one gets it as `side/<name>.mjs` beside `index.mjs`, with a
 * package.json that maps `#side/*` there, and its inputs count among the function's (its grants follow them).
 */
import { buildSync, type BuildOptions, type Metafile } from 'esbuild';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

const SIDE = '#side/';
/** Where the side bundles are built, beside the packages (never a handler's directory). */
const SIDE_DIR = '.side';

/** Side module name → what package.json maps `#side/<name>` to (a project file or a package). */
const sideModules = (root: string): Record<string, string> => {
  const { imports } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { imports: Record<string, string> };
  return Object.fromEntries(Object.entries(imports).filter(([key]) => key.startsWith(SIDE)).map(([key, target]) => [key.slice(SIDE.length), target]));
};

/** One esbuild pass with the options every function is built with (infra/bundling.ts). */
function build(root: string, outdir: string, entryPoints: Record<string, string>, external: string[], write: boolean): Metafile {
  const options: BuildOptions = {
    entryPoints,
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
    external: [...external, `${SIDE}*`],
    metafile: true,
    write,
    absWorkingDir: root,
    logLevel: 'error',
  };
  const { metafile, warnings } = buildSync(options);
  // package.json declares the project's modules free of import side effects ("sideEffects": false), so that a bundle
  // leaves out every module none of whose exports it uses; an import kept for its side effects alone would vanish.
  const dropped = warnings.filter((w) => w.id === 'ignored-bare-import');
  if (dropped.length) throw new Error(`imports for side effects alone are dropped from bundles; import and call what they do: ${dropped.map((w) => `${w.location?.file}:${w.location?.line}`).join(', ')}`);
  return metafile!;
}

/** The `#side/` modules an output imports, by name. */
const sideImports = (metafile: Metafile, outfile: string): string[] =>
  (metafile.outputs[outfile]?.imports ?? []).filter((i) => i.external && i.path.startsWith(SIDE)).map((i) => i.path.slice(SIDE.length));

interface SideBundle { file: string; inputs: string[] }

/** Every side module, built once; a side module may not load another. */
function buildSideBundles(root: string, outdir: string, write: boolean): Map<string, SideBundle> {
  const modules = sideModules(root);
  const metafile = build(root, join(outdir, SIDE_DIR), modules, [], write);
  return new Map(Object.keys(modules).map((name) => {
    const outfile = Object.keys(metafile.outputs).find((f) => f.endsWith(`${SIDE_DIR}/${name}.mjs`))!;
    const nested = sideImports(metafile, outfile);
    if (nested.length) throw new Error(`side module ${name} imports ${nested.map((n) => SIDE + n).join(', ')}: a side module is a leaf`);
    return [name, { file: join(outdir, SIDE_DIR, `${name}.mjs`), inputs: contributingInputs(metafile, outfile) }];
  }));
}

function buildGroup(root: string, outdir: string, requests: BundleRequest[], external: string[], write: boolean, side: Map<string, SideBundle>): Map<string, FunctionBundle & { side: string[] }> {
  const out = new Map<string, FunctionBundle & { side: string[] }>();
  if (!requests.length) return out;
  const metafile = build(root, outdir, Object.fromEntries(requests.map((r) => [`${r.handler}/index`, join(root, 'functions', `${r.handler}.ts`)])), external, write);
  for (const request of requests) {
    const dir = join(outdir, request.handler);
    const outfile = Object.keys(metafile.outputs).find((f) => f.endsWith(`${request.handler}/index.mjs`));
    if (!outfile) throw new Error(`esbuild produced no bundle for functions/${request.handler}.ts`);
    const names = sideImports(metafile, outfile);
    const unknown = names.filter((n) => !side.has(n));
    if (unknown.length) throw new Error(`functions/${request.handler}.ts imports ${unknown.map((n) => SIDE + n).join(', ')}, which package.json does not map`);
    const inputs = new Set([...contributingInputs(metafile, outfile), ...names.flatMap((n) => side.get(n)!.inputs)]);
    out.set(request.handler, { handler: request.handler, dir, inputs: [...inputs], side: names });
  }
  return out;
}

/** The side bundles a package imports, under side/, and the package.json that maps `#side/*` to them. */
const copySideBundles = (dir: string, names: string[], side: Map<string, SideBundle>) => {
  if (!names.length) return;
  for (const name of names) {
    const { file } = side.get(name)!;
    cpSync(file, join(dir, 'side', `${name}.mjs`));
    if (bundling.sourcemap) cpSync(`${file}.map`, join(dir, 'side', `${name}.mjs.map`));
  }
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ imports: { [`${SIDE}*`]: './side/*.mjs' } })}\n`);
};

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
  const side = buildSideBundles(root, outdir, write);
  const built = new Map([
    ...buildGroup(root, outdir, requests.filter((r) => !r.nativeMedia), [], write, side),
    ...buildGroup(root, outdir, requests.filter((r) => r.nativeMedia), bundling.nativeMediaModules, write, side),
  ]);
  const bundles = new Map<string, FunctionBundle>();
  for (const request of requests) {
    const { side: names, ...bundle } = built.get(request.handler)!;
    bundles.set(request.handler, bundle);
    mkdirSync(bundle.dir, { recursive: true });
    if (!write) continue;
    copySideBundles(bundle.dir, names, side);
    if (request.nativeMedia) copyNativeMedia(root, bundle.dir);
    for (const [from, name] of Object.entries(request.extraFiles ?? {})) cpSync(from, join(bundle.dir, name));
  }
  cache.set(key, bundles);
  return bundles;
}
