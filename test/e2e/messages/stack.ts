/**
 * The local stack for the messaging e2e tests, with helpers for the service API (a fresh tenant per test)
 * and for the sandbox's control endpoints (playing the customer's side).
 */
import { startTestStack, type LocalStack } from '../../support/stack.ts';
import { callSandbox, callWith, type Call, type Reply } from '../../support/http.ts';

export type { Reply };

export interface Tenant {
  businessId: string;
  phoneNumberId: string;
  apiKey: string;
  call: Call;
  inbound: (from: string, text?: string, extra?: Record<string, unknown>) => Promise<{ wamid: string }>;
}

export interface MessagingStack {
  stack: LocalStack;
  tenant: () => Promise<Tenant>;
  sandbox: (method: string, path: string, body?: unknown) => Promise<Reply>;
  sent: (to: string) => Promise<any[]>;
  status: (wamid: string, status: string, extra?: Record<string, unknown>) => Promise<void>;
  events: (businessId: string) => Promise<{ event: string; data: any }[]>;
  stop: () => Promise<void>;
}

/** A random E.164 number (Mexico) whose last digits never hit a sandbox failure suffix. */
export const randomPhone = (suffix = ''): string => {
  let n = '+52155';
  while (n.length < 14 - suffix.length) n += Math.floor(Math.random() * 10);
  return n + (suffix || String(Math.floor(Math.random() * 8) + 1));
};

export async function startMessagingStack(): Promise<MessagingStack> {
  process.env.UPSTREAM_RETRY_BASE_MS = '20';
  process.env.UPSTREAM_TIMEOUT_MS = '5000';
  const stack = await startTestStack({ demo: true, queueRetryDelayMs: 50 });
  const { newTenant } = await import('../../support/api.ts');
  const { outboxItemsOf } = await import('#shared/webhooks/outbox-store.ts');

  const sandbox = callSandbox(stack.sandboxUrl);

  const tenant = async (): Promise<Tenant> => {
    const business = await newTenant(undefined, 'Messaging e2e');
    return {
      businessId: business.businessId,
      phoneNumberId: business.phoneNumberId,
      apiKey: business.apiKey,
      call: callWith(stack.url, business.apiKey),
      inbound: async (from, text = 'Hola', extra = {}) => {
        const res = await sandbox('POST', '/__sandbox/inbound', { from, text, phone_number_id: business.phoneNumberId, ...extra });
        if (res.status !== 200) throw new Error(`inbound failed: ${JSON.stringify(res.body)}`);
        await stack.queues.idle();
        return res.body;
      },
    };
  };

  return {
    stack,
    tenant,
    sandbox,
    sent: async (to) => (await sandbox('GET', `/__sandbox/sent?to=${encodeURIComponent(to)}`)).body,
    status: async (wamid, status, extra = {}) => {
      const res = await sandbox('POST', '/__sandbox/status', { wamid, status, ...extra });
      if (res.status !== 200) throw new Error(`status failed: ${JSON.stringify(res.body)}`);
      await stack.queues.idle();
    },
    // The outbox items of the business, oldest first (the fan-out worker may have removed some: read before idle).
    events: async (businessId) => {
      return (await outboxItemsOf(businessId)).map((e) => ({ event: e.event, data: e.data }));
    },
    stop: () => stack.stop(),
  };
}
