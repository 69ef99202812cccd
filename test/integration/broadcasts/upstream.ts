/**
 * The upstream sandbox for the broadcast endpoint tests: a create checks its template against the template list the
 * upstream answers. Call it before importing any service module (they read UPSTREAM_BASE_URL once).
 */
import { TEST_UPSTREAM } from '../../support/upstream-secret.ts';

export async function startUpstream(): Promise<{ close: () => Promise<void> }> {
  const { startSandbox } = await import('#infra/local/sandbox/server.ts');
  const sandbox = await startSandbox({ port: 0, serviceWebhookUrl: 'http://127.0.0.1:9/unused', appSecret: TEST_UPSTREAM.appSecret, accessToken: TEST_UPSTREAM.token });
  process.env.UPSTREAM_BASE_URL = sandbox.url;
  return sandbox;
}
