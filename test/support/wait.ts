/**
 * Polls `read` every `everyMs` until it gives a value (anything truthy), which it returns; past `timeoutMs` it fails
 * naming `what`. For what happens after a request answered: a queue's work, a schedule, a webhook.
 */
export async function waitFor<T>(
  what: string,
  read: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  timeoutMs = 20_000,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (${timeoutMs} ms)`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
