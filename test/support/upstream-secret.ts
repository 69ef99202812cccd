/**
 * The upstream credentials of a test run: the sandbox's, kept (as in the local stack and in AWS) in a Secrets
 * Manager secret that global-setup.ts puts into the run's stand-in and names in UPSTREAM_SECRET_ARN.
 * Tests sign webhooks and answer the handshake with these values; none reads them from the environment.
 */
import { SANDBOX_APP_SECRET, SANDBOX_TOKEN, SANDBOX_VERIFY_TOKEN } from '../../infra/local/sandbox/credentials.ts';

export const TEST_UPSTREAM = { token: SANDBOX_TOKEN, appSecret: SANDBOX_APP_SECRET, verifyToken: SANDBOX_VERIFY_TOKEN } as const;

/** Where the run's stand-in keeps businesses' own tokens (BUSINESS_TOKEN_SECRET_PREFIX). */
export const TEST_BUSINESS_TOKEN_PREFIX = 'wa-crm-test/business-token/';
