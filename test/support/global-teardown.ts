import { rmSync } from 'node:fs';

export default async function globalTeardown() {
  await (globalThis as any).__QUEUES__?.close();
  await (globalThis as any).__DYNAMO__?.stop();
  await (globalThis as any).__SECRETS_MANAGER__?.close();
  if (process.env.BUNDLE_CACHE_DIR) rmSync(process.env.BUNDLE_CACHE_DIR, { recursive: true, force: true });
}
