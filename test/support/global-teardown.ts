export default async function globalTeardown() {
  await (globalThis as any).__QUEUES__?.close();
  await (globalThis as any).__DYNAMO__?.stop();
}
