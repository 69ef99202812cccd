/**
 * GET /docs/scalar.js: the Scalar API reference renderer (its single-file browser bundle), served by the
 * service itself so the docs page needs no CDN. In AWS the file is copied beside this function's bundle
 * (`scalar.js`); locally it is read from node_modules. Sent gzip-compressed when the client accepts it.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { publicEndpoint } from '#shared/http/public-endpoint.ts';

// The package exports only its modules (not package.json): its main entry is dist/index.js, beside dist/browser/.
const fromPackage = () => readFile(join(dirname(createRequire(import.meta.url).resolve('@scalar/api-reference')), 'browser', 'standalone.js'));

let cached: Promise<{ plain: Buffer; gzip: string }> | undefined;

const assetOnce = () =>
  (cached ??= readFile(new URL('./scalar.js', import.meta.url))
    .catch(fromPackage)
    .then((plain) => ({ plain, gzip: gzipSync(plain, { level: 9 }).toString('base64') })));

export const { handler, spec } = publicEndpoint(
  { route: 'GET /docs/scalar.js', summary: 'The docs page renderer (Scalar API reference bundle, JavaScript)', responses: { 200: 'JavaScript' } },
  async ({ headers }) => {
    const asset = await assetOnce();
    const gzip = /\bgzip\b/.test(headers['accept-encoding'] ?? '');
    return {
      statusCode: 200,
      headers: {
        'content-type': 'text/javascript; charset=utf-8',
        'cache-control': 'public, max-age=86400',
        'x-content-type-options': 'nosniff',
        vary: 'accept-encoding',
        ...(gzip ? { 'content-encoding': 'gzip' } : {}),
      },
      body: gzip ? asset.gzip : asset.plain.toString('utf8'),
      isBase64Encoded: gzip,
    };
  },
);
