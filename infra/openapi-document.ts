/**
 * The OpenAPI document, built from the handler modules' own schemas at synth time and shipped beside the meta
 * functions' bundles (functions/http/meta/openapi.ts serves it). Written to a path named by its content: two synths of
 * the same sources then ask for byte-for-byte the same packages, which infra/bundle.ts reuses only then.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export async function writeOpenApiDocument(): Promise<string> {
  const { buildOpenApi, loadSpecs } = await import('../shared/openapi/document.ts');
  const text = JSON.stringify(buildOpenApi(await loadSpecs((handler) => import(`../functions/${handler}.ts`))));
  const dir = join(tmpdir(), 'wa-crm-openapi', createHash('sha256').update(text).digest('hex').slice(0, 16));
  mkdirSync(dir, { recursive: true });
  // Whole or not at all, for another synth reading the same path.
  const path = join(dir, 'openapi.json');
  const partial = `${path}.${process.pid}`;
  writeFileSync(partial, text);
  renameSync(partial, path);
  return path;
}
