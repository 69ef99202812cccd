/**
 * The one way service code reads its environment. Every name is written as a string literal at the call
 * (`requiredEnv('TABLE_NAME')`), so that the infra test can find, per function bundle, every setting its code
 * reads and check that the synthesized template provides it.
 *
 * - `requiredEnv`: a setting a function cannot work without. Missing or empty → `ConfigurationError` naming the
 *   variable, thrown when the code first needs it (never at import, so that a function lacking it fails its first
 *   request loudly: logged, answered 500 `configuration_error`, or the queue message is retried and dead-lettered).
 * - `optionalEnv` / `numberEnv` / `boolEnv`: tunables with a documented default.
 */

/** A setting the function needs is missing: a deployment defect, never a client's fault. */
export class ConfigurationError extends Error {
  override readonly name = 'ConfigurationError';
  constructor(readonly variable: string, detail = 'is not set') {
    super(`Configuration error: environment variable ${variable} ${detail}`);
  }
}

export const optionalEnv = (name: string): string | undefined => {
  const raw = process.env[name];
  return raw === undefined || raw === '' ? undefined : raw;
};

export const requiredEnv = (name: string): string => {
  const raw = optionalEnv(name);
  if (raw === undefined) throw new ConfigurationError(name);
  return raw;
};

/** A number, or `fallback` when unset; a value that is not a number (or below `min`) is a configuration error. */
export const numberEnv = (name: string, fallback: number, { min = -Infinity }: { min?: number } = {}): number => {
  const raw = optionalEnv(name);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min) throw new ConfigurationError(name, `must be a number${min > -Infinity ? ` ≥ ${min}` : ''} (got "${raw}")`);
  return n;
};

/** `1`/`true` or `0`/`false` (any case), or `fallback` when unset. */
export const boolEnv = (name: string, fallback: boolean): boolean => {
  const raw = optionalEnv(name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (raw === '1' || raw === 'true') return true;
  if (raw === '0' || raw === 'false') return false;
  throw new ConfigurationError(name, `must be true or false (got "${raw}")`);
};
