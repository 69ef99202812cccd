/**
 * How every function is bundled, in one place: the CDK stack passes these to NodejsFunction, and the
 * cold-start benchmark bundles with exactly the same options.
 */
export const bundling = {
  format: 'esm' as const,
  /**
   * What a function reaches only through `import()` (its own or a dependency's, such as the SDK's credential
   * providers) is a chunk of its own, loaded on first use and sharing the rest of the bundle's code (infra/bundle.ts).
   */
  splitting: true,
  platform: 'node' as const,
  target: 'node22',
  minify: true,
  sourcemap: true,
  // Stack traces need the mappings only; the sources themselves would triple every package's size.
  sourcesContent: false,
  mainFields: ['module', 'main'],
  /**
   * `node:http` through infra/shims/node-http.ts: imported as an ES module (middy's utilities, the SDK's HTTP handler
   * and metadata providers, safe-fetch), the built-in loads Node's own undici at init (about 40 ms of CPU).
   */
  alias: { 'node:http': './infra/shims/node-http.ts', http: './infra/shims/node-http.ts' },
  // ESM bundles still meet CommonJS dependencies that call require().
  banner: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
  /** Only the media worker ships these (native binaries), copied beside its bundle. */
  nativeMediaModules: ['sharp', '@ffmpeg-installer/ffmpeg'],
};
