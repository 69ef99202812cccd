/**
 * The container's one Secrets Manager reader: Powertools Parameters' SecretsProvider (its own SDK client, so the
 * standard `AWS_ENDPOINT_URL_SECRETS_MANAGER` points it at the local stand-in exactly as it would at any endpoint),
 * loaded on the first read (secrets-provider.ts) so that a cold start does not evaluate the Secrets Manager client;
 * and the rule for how often a failed check may force a re-read.
 */
import { onFirstUse } from '#shared/lang/on-first-use.ts';

/** The provider and the GetParameterError class its failures are instances of. */
export const secrets = onFirstUse(() => import('./secrets-provider.ts'));

/**
 * A failed check (webhook signature, verify token, upstream 401) re-reads its secret at most once per this
 * interval per key and container: a rotation is picked up at once, while unauthenticated requests with bad
 * signatures cannot turn into a stream of Secrets Manager calls.
 */
const REFRESH_INTERVAL_MS = 30_000;
const lastRefresh = new Map<string, number>();

/** True (and remembered) when `key` may be force-fetched now, `intervalMs` after its last forced read. */
export function mayRefresh(key: string, now = Date.now(), intervalMs = REFRESH_INTERVAL_MS): boolean {
  if (now - (lastRefresh.get(key) ?? -Infinity) < intervalMs) return false;
  lastRefresh.set(key, now);
  return true;
}
