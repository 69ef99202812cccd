/**
 * Per-business upstream access tokens. With Meta's Embedded Signup each business grants a token of its own for
 * its WhatsApp Business Account; it is kept in Secrets Manager, one secret per business named
 * `<BUSINESS_TOKEN_SECRET_PREFIX><businessId>` holding `{ "token": "..." }`.
 *
 * Why a secret per business rather than a KMS-encrypted attribute of the business record: the token never enters
 * the table (so no query, export, stream, backup or log of an item can carry it, even as ciphertext), IAM can
 * grant reading exactly the prefix, every read is audited by CloudTrail, and rotation is one `PutSecretValue`
 * that containers pick up without a deploy. A KMS attribute would need the same key grant on every function
 * that reads the business record and our own encryption code; a secret costs $0.40 a month per business.
 *
 * A business without a secret sends with the stack's token. Reads are cached per container for MAX_AGE_SECONDS
 * (the absence too, so a business without its own token costs one lookup per period); an upstream 401 re-reads
 * (shared/upstream/client.ts), so a rotated or newly granted token is used at once.
 *
 * The token is only ever put into an Authorization header: never returned, logged or queued.
 */
import { ConfigurationError, requiredEnv } from '#shared/settings/env.ts';
import { mayRefresh, secrets } from './secrets.ts';
import { refreshedUpstreamCredentials, upstreamCredentials } from './upstream-credentials.ts';

const MAX_AGE_SECONDS = 5 * 60;

/** Businesses known (until the time given) to have no token of their own. */
const absentUntil = new Map<string, number>();

export const businessTokenSecretName = (businessId: string): string => `${requiredEnv('BUSINESS_TOKEN_SECRET_PREFIX')}${businessId}`;

async function ownToken(businessId: string, forceFetch: boolean): Promise<string | undefined> {
  if (!forceFetch && (absentUntil.get(businessId) ?? 0) > Date.now()) return undefined;
  const { provider, GetParameterError } = await secrets();
  try {
    const value = await provider.get(businessTokenSecretName(businessId), { transform: 'json', maxAge: MAX_AGE_SECONDS, forceFetch });
    const token = (value as { token?: unknown } | undefined)?.token;
    if (typeof token !== 'string' || !token) {
      throw new ConfigurationError('BUSINESS_TOKEN_SECRET_PREFIX', `names a secret for business ${businessId} without a "token" string`);
    }
    absentUntil.delete(businessId);
    return token;
  } catch (err) {
    if (!(err instanceof GetParameterError && (err.cause as Error | undefined)?.name === 'ResourceNotFoundException')) throw err;
  }
  absentUntil.set(businessId, Date.now() + MAX_AGE_SECONDS * 1000);
  return undefined;
}

/** The access token upstream calls for `businessId` carry: its own, or the stack's. */
export async function accessTokenFor(businessId: string): Promise<string> {
  return (await ownToken(businessId, false)) ?? (await upstreamCredentials()).token;
}

/**
 * How often an upstream 401 may re-read a business's token. Only a caller holding the business's API key (within
 * its rate limit) can cause one, unlike the unauthenticated webhooks the 30 s rule of secrets.ts guards against, so a
 * second is enough: a token granted or rotated just after a refused send is used by the next send.
 */
const TOKEN_REFRESH_MS = 1_000;

/**
 * After the upstream refused the token (401): the token re-read from Secrets Manager (a rotation), at most once
 * per TOKEN_REFRESH_MS per business; undefined when that gives nothing new to try.
 */
export async function refreshedAccessTokenFor(businessId: string, refused: string): Promise<string | undefined> {
  if (!mayRefresh(`business-token:${businessId}`, Date.now(), TOKEN_REFRESH_MS)) return undefined;
  const token = (await ownToken(businessId, true)) ?? (await refreshedUpstreamCredentials()).token;
  return token === refused ? undefined : token;
}
