/**
 * The upstream (WhatsApp Cloud API) credentials: from the environment locally, from Secrets Manager in AWS
 * (UPSTREAM_SECRET_ARN, a JSON `{ token, appSecret, verifyToken }`), fetched once per container.
 */
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { config } from '#shared/config.ts';

export interface UpstreamCredentials {
  token: string;
  appSecret: string;
  verifyToken: string;
}

let cached: Promise<UpstreamCredentials> | undefined;

export const upstreamCredentials = (): Promise<UpstreamCredentials> =>
  (cached ??= (async () => {
    const arn = process.env.UPSTREAM_SECRET_ARN;
    if (!arn) return { token: config.upstreamToken, appSecret: config.upstreamAppSecret, verifyToken: config.upstreamVerifyToken };
    const client = new SecretsManagerClient({ region: config.region });
    const { SecretString } = await client.send(new GetSecretValueCommand({ SecretId: arn }));
    const parsed = JSON.parse(SecretString ?? '{}');
    return { token: String(parsed.token ?? ''), appSecret: String(parsed.appSecret ?? ''), verifyToken: String(parsed.verifyToken ?? '') };
  })().catch((err) => {
    cached = undefined; // a transient failure must not poison the container
    throw err;
  }));
