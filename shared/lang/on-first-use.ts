/**
 * A module or client made on first use and kept for the container's life: what only some requests need
 * (or what the first request can wait for) is not evaluated at cold start. Inside one bundle a dynamic
 * `import()` is still inlined, but esbuild wraps its target so that it is evaluated when first imported.
 * Only import a package this way that no statically imported module also imports: the shared package would
 * then be evaluated whole at load (its barrel can no longer be tree-shaken), which costs more than it saves.
 */

/** `make` runs once; a failed attempt is forgotten, so the next use tries again. */
export function onFirstUse<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => (made ??= make().catch((err: unknown) => {
    made = undefined;
    throw err;
  }));
}
