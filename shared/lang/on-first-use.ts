/**
 * A module or client made on first use and kept for the container's life: what only some requests need (or what
 * the first request can wait for) is not evaluated at cold start. Two ways to load a module on first use:
 * - `import('#side/<name>')`, a module package.json maps under `#side/`: infra/bundle.ts ships it as a bundle of its
 *   own beside index.mjs, so a cold start does not even parse it. It has its own copy of everything it imports, so
 *   only a leaf that shares no class (`instanceof`) or state with the function's code may be one (an SDK client and
 *   the commands and errors used with it, a parser).
 * - `import()` of a project module: esbuild inlines it and evaluates it when first imported, but still parses it at
 *   load. It must reach no package that the function also imports statically: esbuild would then evaluate that
 *   package whole at load (its barrel can no longer be tree-shaken), which costs more than it saves.
 */

/** `make` runs once; a failed attempt is forgotten, so the next use tries again. */
export function onFirstUse<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => (made ??= make().catch((err: unknown) => {
    made = undefined;
    throw err;
  }));
}
