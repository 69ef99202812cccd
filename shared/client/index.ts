/** The typed client: `import { WaCrmClient, verifyWebhookSignature } from '#shared/client/index.ts'`. */
export { WaCrmClient, WaCrmError, type ClientOptions } from './client.ts';
export { verifyWebhookSignature } from './verify.ts';
export type * from './types.ts';
