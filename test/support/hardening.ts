/**
 * Helpers of the hardening tests (test/integration/security, test/e2e/hardening): the local stack with fresh
 * tenants that call it over HTTP, a webhook receiver that can be taken down, the whole of a business's items in
 * the table (for before/after comparisons), and the `hardening:` summary lines the README's Reliability section quotes.
 * The HTTP helpers themselves (calls, parsing, the receiver) live in http.ts and are re-exported here.
 */
import type { LocalStack, LocalStackOptions } from '#infra/local/stack.ts';
import type { Scope } from '#shared/auth/scopes.ts';
import { callSandbox, callWith, type Call } from './http.ts';
import { scanTable } from './table.ts';

export { parseReply, startReceiver, type Reply } from './http.ts';

export interface StackTenant {
  businessId: string;
  phoneNumberId: string;
  apiKey: string;
  keyId: string;
  call: Call;
}

/** One summary line for the README's Reliability section. */
export const report = (line: string) => console.log(`hardening: ${line}`);

/** A random E.164 number whose last digit never hits a sandbox failure suffix. */
export const randomPhone = (): string => {
  let n = '+52155';
  while (n.length < 13) n += Math.floor(Math.random() * 10);
  return n + String(Math.floor(Math.random() * 8) + 1);
};

export async function startHardeningStack(options: LocalStackOptions = {}) {
  process.env.UPSTREAM_RETRY_BASE_MS ??= '20';
  process.env.UPSTREAM_TIMEOUT_MS ??= '2000';
  const { startTestStack } = await import('./stack.ts');
  const stack: LocalStack = await startTestStack({ demo: true, queueRetryDelayMs: 50, ...options });
  const { newTenant } = await import('./api.ts');
  const { SCOPES } = await import('#shared/auth/scopes.ts');

  const tenant = async (scopes: readonly Scope[] = SCOPES): Promise<StackTenant> => {
    const t = await newTenant(scopes, `Hardening ${Math.random().toString(36).slice(2, 8)}`);
    return { ...t, call: callWith(stack.url, t.apiKey) };
  };

  const sandbox = callSandbox(stack.sandboxUrl);

  /**
   * Every item of a business: its partitions (`B#{bid}`, `B#{bid}#...`) and the global pointers that name it.
   * Index entries are attributes of these items, so comparing them compares the GSIs too. Sorted, for equality.
   */
  const businessItems = async (bid: string) => {
    const items = await scanTable({
      FilterExpression: 'pk = :pk OR begins_with(pk, :prefix) OR businessId = :bid',
      ExpressionAttributeValues: { ':pk': `B#${bid}`, ':prefix': `B#${bid}#`, ':bid': bid },
    });
    return items.sort((a, b) => `${a.pk}|${a.sk}`.localeCompare(`${b.pk}|${b.sk}`));
  };

  return { stack, tenant, sandbox, businessItems, idle: (ms?: number) => stack.queues.idle(ms), stop: () => stack.stop() };
}

export type HardeningStack = Awaited<ReturnType<typeof startHardeningStack>>;
