/**
 * Jest transform: TypeScript → ES modules with esbuild (the same compiler that bundles the functions), so tests
 * run the sources as native ESM (package.json runs jest with --experimental-vm-modules).
 */
const { transformSync } = require('esbuild');

module.exports = {
  canInstrument: false,
  process(sourceText, sourcePath) {
    const { code, map } = transformSync(sourceText, {
      loader: 'ts',
      format: 'esm',
      target: 'node22',
      sourcemap: 'external',
      sourcefile: sourcePath,
    });
    return { code, map };
  },
};
