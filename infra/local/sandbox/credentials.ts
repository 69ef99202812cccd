/**
 * The sandbox's upstream credentials: what the local stack (and the test run) put into the Secrets Manager
 * stand-in's stack secret, and where the admin CLI keeps businesses' own tokens locally. A module of plain values,
 * so that jest's global setup (Node type stripping, no bundler) can load it.
 */
export const SANDBOX_TOKEN = 'sandbox-access-token';
export const SANDBOX_APP_SECRET = 'sandbox-app-secret';
export const SANDBOX_VERIFY_TOKEN = 'sandbox-verify-token';
/** Where the admin CLI keeps businesses' own access tokens, and the functions read them (as in AWS). */
export const LOCAL_BUSINESS_TOKEN_SECRET_PREFIX = 'wa-crm/business-token/';
