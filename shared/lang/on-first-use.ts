/**
 * A module or client made on first use and kept for the container's life: what only some requests need (or what
 * the first request can wait for) is not evaluated at cold start. Load such a module with `import()`: infra/bundle.ts
 * splits what a function reaches only that way into chunks of its package that a cold start neither parses nor
 * evaluates, and that share every module they have in common with the rest of the bundle (the SDK core, classes
 * checked with `instanceof`, module state). A module the function also imports statically stays where it is.
 */

/** `make` runs once; a failed attempt is forgotten, so the next use tries again. */
export function onFirstUse<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => (made ??= make().catch((err: unknown) => {
    made = undefined;
    throw err;
  }));
}
