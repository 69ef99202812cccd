/**
 * GET /docs in headless Chromium (the one npm installs, test/support/chromium.ts): the Scalar reference renders
 * from the service's own bundle and document (no CDN, every request stays on the service), lists the
 * operations, and logs no console errors. A screenshot is saved to test-output/docs.png. It never skips.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext } from 'playwright-core';
import { startTestStack, type LocalStack } from '../../support/stack.ts';
import { launchChromium } from '../../support/chromium.ts';

describe('docs page in Chromium', () => {
  let stack: LocalStack;
  let browser: BrowserContext;
  const profile = mkdtempSync(join(tmpdir(), 'docs-chromium-'));

  beforeAll(async () => {
    stack = await startTestStack();
    // A fresh profile directory (the --user-data-dir of this launch).
    browser = await launchChromium(profile);
  }, 60_000);
  // Rendering the whole reference is seconds of CPU; on a busy 2-core machine, tens of seconds.
  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    rmSync(profile, { recursive: true, force: true });
  }, 60_000);

  it('renders the reference with every area, no console errors and no request off the service', async () => {
    // Prepare
    const page = await browser.newPage();
    const errors: string[] = [];
    const foreign: string[] = [];
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('request', (r) => !r.url().startsWith(stack.url) && !r.url().startsWith('data:') && foreign.push(r.url()));
    // Act
    const res = await page.goto(`${stack.url}/docs`, { waitUntil: 'load' });
    await page.getByText('Send a message', { exact: false }).first().waitFor({ timeout: 150_000 });
    await page.waitForTimeout(1000); // let late console errors surface
    mkdirSync('test-output', { recursive: true });
    await page.screenshot({ path: 'test-output/docs.png', timeout: 120_000 });
    // Assess
    expect(res?.status()).toBe(200);
    const text = await page.locator('body').innerText();
    for (const summary of ['Send a message', 'List the funnel stages', 'List the team agents', 'Bulk contact operations']) expect(text).toContain(summary);
    for (const tag of ['messages', 'funnel', 'contacts', 'segments', 'user-webhooks']) expect(text.toLowerCase()).toContain(tag);
    expect(errors).toEqual([]);
    expect(foreign).toEqual([]);
  }, 240_000);

  it('sends /docs/ to /docs, where the page\'s relative links resolve', async () => {
    // Act
    const res = await fetch(`${stack.url}/docs/`, { redirect: 'manual' });
    // Assess
    expect(res.status).toBe(308);
    expect(new URL(res.headers.get('location')!, `${stack.url}/docs/`).href).toBe(`${stack.url}/docs`);
  });

  it('serves the renderer gzip-compressed and keeps a no-JS fallback', async () => {
    // Act
    const js = await fetch(`${stack.url}/docs/scalar.js`, { headers: { 'accept-encoding': 'gzip' } });
    const html = await (await fetch(`${stack.url}/docs`)).text();
    // Assess
    expect(js.status).toBe(200);
    expect(js.headers.get('content-encoding')).toBe('gzip');
    expect(js.headers.get('content-type')).toMatch(/javascript/);
    expect((await js.arrayBuffer()).byteLength).toBeGreaterThan(100_000);
    expect(html).toContain('<noscript>');
    expect(html).toMatch(/<noscript>[\s\S]*POST<\/span> <code>\/messages\/v1<\/code>[\s\S]*<\/noscript>/);
    expect(html).not.toMatch(/https?:\/\/(cdn|unpkg|fonts)\./);
  });
});
