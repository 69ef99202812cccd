/**
 * Writing a business's own upstream access token (the admin CLI's `set-messaging --token-stdin|--token-file`):
 * `PutSecretValue` on its secret, or `CreateSecret` the first time. Functions only read it
 * (shared/secrets/business-token.ts); a new value is used within that module's cache age, or at once after a 401.
 */
import { CreateSecretCommand, PutSecretValueCommand, ResourceNotFoundException, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { businessTokenSecretName } from './business-token.ts';

/** Graph access tokens are long runs of letters and digits; anything else (a space, a newline, a quote) is a paste error. */
const TOKEN_SHAPE = /^[A-Za-z0-9._|-]{16,4096}$/;

export class InvalidAccessTokenError extends Error {
  override readonly name = 'InvalidAccessTokenError';
}

export async function storeBusinessToken(businessId: string, token: string): Promise<void> {
  if (!TOKEN_SHAPE.test(token)) {
    // The message never repeats the value: it is a credential even when malformed.
    throw new InvalidAccessTokenError(`The access token must be 16 to 4096 letters, digits or . _ | - (got ${token.length} characters)`);
  }
  const client = new SecretsManagerClient({});
  const name = businessTokenSecretName(businessId);
  const SecretString = JSON.stringify({ token });
  try {
    await client.send(new PutSecretValueCommand({ SecretId: name, SecretString }));
  } catch (err) {
    if (!(err instanceof ResourceNotFoundException)) throw err;
    await client.send(new CreateSecretCommand({ Name: name, SecretString, Description: `WhatsApp Cloud API access token of business ${businessId}` }));
  }
}
