/**
 * The bundler as the CDK CLI drives it: the CLI gives the app a relative cloud assembly directory
 * (`CDK_OUTDIR=cdk.out`), so `cdk synth` and `cdk deploy` bundle into a relative path. And a build kept for other
 * processes is reused only for the very same sources.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { bundleFunctions, requireLambdaMediaBinaries } from '#infra/bundle.ts';

it('bundles into a relative output directory, as `cdk synth` asks', () => {
  // Prepare
  const dir = mkdtempSync(join(process.cwd(), '.bundle-test-'));
  try {
    // Act
    const bundles = bundleFunctions(process.cwd(), [{ handler: 'http/meta/openapi' }], relative(process.cwd(), dir), { write: false });

    // Assess
    expect(bundles.get('http/meta/openapi')?.dir).toBe(join(dir, 'http/meta/openapi'));
    expect(bundles.get('http/meta/openapi')?.inputs).toEqual(expect.arrayContaining(['functions/http/meta/openapi.ts']));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

it("refuses to package the media worker without its Lambda binaries (npm ci on another platform), saying how to deploy", () => {
  // Prepare: a checkout whose node_modules has sharp's binaries for another platform only
  const root = mkdtempSync(join(tmpdir(), 'other-platform-'));
  try {
    for (const pkg of ['@img/sharp-darwin-arm64', '@ffmpeg-installer/linux-x64']) {
      mkdirSync(join(root, 'node_modules', pkg), { recursive: true });
      writeFileSync(join(root, 'node_modules', pkg, 'package.json'), '{}');
    }

    // Act / Assess
    expect(() => requireLambdaMediaBinaries(root)).toThrow(/@img\/sharp-linux-x64, @img\/sharp-libvips-linux-x64 are not installed.*linux x64/);
    expect(() => requireLambdaMediaBinaries(process.cwd())).not.toThrow();
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

describe('builds kept between processes (BUNDLE_CACHE_DIR)', () => {
  const request = (extra: string) => [{ handler: 'http/meta/openapi', extraFiles: { [extra]: 'notes.txt' } }];
  let root: string;
  let restore: string | undefined;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'bundle-keep-'));
    restore = process.env.BUNDLE_CACHE_DIR;
    process.env.BUNDLE_CACHE_DIR = join(root, 'kept');
  });
  afterEach(() => {
    if (restore === undefined) delete process.env.BUNDLE_CACHE_DIR;
    else process.env.BUNDLE_CACHE_DIR = restore;
    rmSync(root, { recursive: true, force: true });
  });

  it('copies a kept build of the very same sources into another output directory, with its inputs and init files', () => {
    // Prepare: one build kept, marked so that a copy of it can be told from a new build
    const extra = join(root, 'notes.txt');
    writeFileSync(extra, 'v1');
    const first = bundleFunctions(process.cwd(), request(extra), join(root, 'a', '.bundles'));
    const [kept] = readdirSync(process.env.BUNDLE_CACHE_DIR!);
    writeFileSync(join(process.env.BUNDLE_CACHE_DIR!, kept, 'packages', 'http/meta/openapi', 'marker'), 'kept');

    // Act
    const second = bundleFunctions(process.cwd(), request(extra), join(root, 'b', '.bundles'));

    // Assess
    const [a, b] = [first, second].map((bundles) => bundles.get('http/meta/openapi')!);
    expect(readFileSync(join(b.dir, 'marker'), 'utf8')).toBe('kept');
    expect(readFileSync(join(b.dir, 'index.mjs'))).toEqual(readFileSync(join(a.dir, 'index.mjs')));
    expect(b.inputs).toEqual(a.inputs);
    expect(b.initFiles).toEqual(a.initFiles.map((f) => f.replace(join(root, 'a'), join(root, 'b'))));
    expect(b.initFiles.every((f) => existsSync(f))).toBe(true);
  });

  it('waits for another process building the same sources, and takes its build instead of making one', () => {
    // Prepare: a build kept elsewhere, marked; another process holds the lock, and after a second puts that build in place
    const extra = join(root, 'notes.txt');
    writeFileSync(extra, 'v1');
    const elsewhere = join(root, 'elsewhere');
    process.env.BUNDLE_CACHE_DIR = elsewhere;
    bundleFunctions(process.cwd(), request(extra), join(root, 'a', '.bundles'));
    const [name] = readdirSync(elsewhere);
    writeFileSync(join(elsewhere, name, 'packages', 'http/meta/openapi', 'marker'), 'from the other process');
    const keptDir = join(root, 'kept');
    process.env.BUNDLE_CACHE_DIR = keptDir;
    mkdirSync(join(keptDir, `${name}.lock`), { recursive: true });
    const other = spawn(process.execPath, ['-e', `setTimeout(() => {
      const fs = require('node:fs');
      fs.cpSync(${JSON.stringify(join(elsewhere, name))}, ${JSON.stringify(join(keptDir, `${name}.tmp`))}, { recursive: true });
      fs.renameSync(${JSON.stringify(join(keptDir, `${name}.tmp`))}, ${JSON.stringify(join(keptDir, name))});
      fs.rmSync(${JSON.stringify(join(keptDir, `${name}.lock`))}, { recursive: true });
    }, 1000)`], { stdio: 'ignore' });

    // Act
    const started = Date.now();
    const bundle = bundleFunctions(process.cwd(), request(extra), join(root, 'b', '.bundles')).get('http/meta/openapi')!;

    // Assess
    other.kill();
    expect(readFileSync(join(bundle.dir, 'marker'), 'utf8')).toBe('from the other process');
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it('builds again when anything it is made from changed (here a file copied beside the handler)', () => {
    // Prepare
    const extra = join(root, 'notes.txt');
    writeFileSync(extra, 'v1');
    bundleFunctions(process.cwd(), request(extra), join(root, 'a', '.bundles'));
    const [kept] = readdirSync(process.env.BUNDLE_CACHE_DIR!);
    writeFileSync(join(process.env.BUNDLE_CACHE_DIR!, kept, 'packages', 'http/meta/openapi', 'marker'), 'kept');

    // Act
    writeFileSync(extra, 'v2');
    const second = bundleFunctions(process.cwd(), request(extra), join(root, 'b', '.bundles')).get('http/meta/openapi')!;

    // Assess
    expect(existsSync(join(second.dir, 'marker'))).toBe(false);
    expect(readFileSync(join(second.dir, 'notes.txt'), 'utf8')).toBe('v2');
    expect(readdirSync(process.env.BUNDLE_CACHE_DIR!)).toHaveLength(2);
  });
});
