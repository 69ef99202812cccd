/**
 * Headless Chromium from npm alone, for the browser tests: `@sparticuz/chromium` ships the browser and the
 * shared libraries it needs that a bare machine may lack (NSS, NSPR, expat) inside its npm package; they are
 * unpacked once under the temp folder and given to the browser only (LD_LIBRARY_PATH of its process), so the
 * test runs after `npm ci` on a fresh machine or in CI with nothing installed by hand.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import chromium from '@sparticuz/chromium';
import { chromium as playwright, type BrowserContext } from 'playwright-core';

/** The package's own libraries, unpacked next to the browser it unpacks. */
function sharedLibraries(): string {
  const dir = join(tmpdir(), 'sparticuz-al2023');
  const lib = join(dir, 'lib');
  if (existsSync(join(lib, 'libnss3.so'))) return lib;
  const bin = join(dirname(createRequire(import.meta.url).resolve('@sparticuz/chromium')), '..', '..', 'bin');
  mkdirSync(dir, { recursive: true });
  const tar = join(dir, 'al2023.tar');
  writeFileSync(tar, brotliDecompressSync(readFileSync(join(bin, 'al2023.tar.br'))));
  execFileSync('tar', ['-xf', tar, '-C', dir]);
  return lib;
}

/** A persistent context of the packaged Chromium, with a fresh profile in `profile`. */
export async function launchChromium(profile: string, viewport = { width: 1400, height: 1000 }): Promise<BrowserContext> {
  const executablePath = await chromium.executablePath();
  const libraries = sharedLibraries();
  return playwright.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    viewport,
    env: { ...process.env, LD_LIBRARY_PATH: [libraries, process.env.LD_LIBRARY_PATH].filter(Boolean).join(':') },
    // The package's flags, and no background connections: this machine's closed network refuses them.
    args: [...chromium.args, '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
