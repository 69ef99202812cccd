/**
 * The local stack for the messaging e2e tests, with helpers for the service API (a fresh tenant per test)
 * and for the sandbox's control endpoints (playing the customer's side).
 */
import { startLocalStack, type LocalStack } from '#infra/local/stack.ts';

export interface Reply {
  status: number;
  body: any;
  headers: Headers;
}

export interface Tenant {
  businessId: string;
  phoneNumberId: string;
  apiKey: string;
  call: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<Reply>;
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

const parse = async (res: Response): Promise<Reply> => {
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    /* text */
  }
  return { status: res.status, body, headers: res.headers };
};

/** A random E.164 number (Mexico) whose last digits never hit a sandbox failure suffix. */
export const randomPhone = (suffix = ''): string => {
  let n = '+52155';
  while (n.length < 14 - suffix.length) n += Math.floor(Math.random() * 10);
  return n + (suffix || String(Math.floor(Math.random() * 8) + 1));
};

export async function startMessagingStack(): Promise<MessagingStack> {
  process.env.UPSTREAM_RETRY_BASE_MS = '20';
  process.env.UPSTREAM_TIMEOUT_MS = '5000';
  const stack = await startLocalStack({ port: 0, sandboxPort: 0, dynamodbEndpoint: process.env.DYNAMODB_ENDPOINT, demo: true, quiet: true, queueRetryDelayMs: 50 });
  const { createBusiness } = await import('#shared/business/repository.ts');
  const { createApiKey } = await import('#shared/auth/api-keys.ts');
  const { SCOPES } = await import('#shared/auth/scopes.ts');
  const { outboxItemsOf } = await import('#shared/webhooks/outbox-store.ts');

  const sandbox = async (method: string, path: string, body?: unknown) =>
    parse(await fetch(`${stack.sandboxUrl}${path}`, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) }));

  const tenant = async (): Promise<Tenant> => {
    const business = await createBusiness('Messaging e2e');
    const key = await createApiKey(business.businessId, [...SCOPES]);
    return {
      businessId: business.businessId,
      phoneNumberId: business.phoneNumberId!,
      apiKey: key.apiKey,
      call: async (method, path, body, headers = {}) =>
        parse(await fetch(`${stack.url}${path}`, {
          method,
          headers: { authorization: `Bearer ${key.apiKey}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
          body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
        })),
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
