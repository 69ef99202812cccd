/**
 * The stack's upstream (WhatsApp Cloud API) credentials: the secret named by UPSTREAM_SECRET_ARN, a JSON
 * `{ token, appSecret, verifyToken }`, read through Secrets Manager in AWS and locally alike (the local stack puts
 * the sandbox's credentials into its Secrets Manager stand-in). Read once per container and kept for
 * MAX_AGE_SECONDS; a failed check re-reads it first (`withRotation`), so a rotated secret works without a deploy.
 *
 * The app secret and verify token belong to the one Meta app of the stack; the token is the one every business
 * without its own uses (shared/secrets/business-token.ts).
 */
import { ConfigurationError, requiredEnv } from '#shared/settings/env.ts';
import { mayRefresh, secrets } from './secrets.ts';

export interface UpstreamCredentials {
  token: string;
  appSecret: string;
  verifyToken: string;
}

/**
 * The app secret that is not one: the marker `set-me` that stacks deployed before the random secret started with
 * (an empty one is a malformed secret, refused as such). Webhooks "signed" with it prove nothing, so they are
 * refused until it is set. Any other value is the operator's choice, whatever its length.
 */
export const isPlaceholderAppSecret = (appSecret: string): boolean => appSecret === 'set-me';

/** Without a failure to trigger it, a rotation is still picked up within this time. */
const MAX_AGE_SECONDS = 15 * 60;

const FIELDS = ['token', 'appSecret', 'verifyToken'] as const;

async function read(refresh: boolean): Promise<UpstreamCredentials> {
  const arn = requiredEnv('UPSTREAM_SECRET_ARN');
  const forceFetch = refresh && mayRefresh(`upstream-credentials:${arn}`);
  const { provider, GetParameterError } = await secrets();
  let value: unknown;
  try {
    value = await provider.get(arn, { transform: 'json', maxAge: MAX_AGE_SECONDS, forceFetch });
  } catch (err) {
    // Not JSON, or a secret that is not there: a deployment defect that names its variable. Transient faults stay as they are.
    if (!(err instanceof GetParameterError) || (err.cause as Error | undefined)?.name === 'ResourceNotFoundException') {
      throw new ConfigurationError('UPSTREAM_SECRET_ARN', `names a secret that cannot be read as JSON (${(err as Error).message})`);
    }
    throw err;
  }
  const record = (value ?? {}) as Record<string, unknown>;
  const missing = FIELDS.filter((f) => typeof record[f] !== 'string' || record[f] === '');
  if (missing.length) throw new ConfigurationError('UPSTREAM_SECRET_ARN', `names a secret without ${missing.join(', ')} (a JSON object of ${FIELDS.join(', ')} strings)`);
  return { token: record.token as string, appSecret: record.appSecret as string, verifyToken: record.verifyToken as string };
}

export const upstreamCredentials = (): Promise<UpstreamCredentials> => read(false);

/** The credentials re-read from Secrets Manager, unless they were re-read moments ago (then the cached ones). */
export const refreshedUpstreamCredentials = (): Promise<UpstreamCredentials> => read(true);

/**
 * `check` against the cached credentials and, when it fails, once more against a fresh read: a secret rotated
 * since the container read it must not fail a genuine request.
 */
export async function withRotation(check: (credentials: UpstreamCredentials) => boolean): Promise<{ ok: boolean; credentials: UpstreamCredentials }> {
  const cached = await upstreamCredentials();
  if (check(cached)) return { ok: true, credentials: cached };
  const fresh = await refreshedUpstreamCredentials();
  return { ok: check(fresh), credentials: fresh };
}
