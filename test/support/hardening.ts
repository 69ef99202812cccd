/**
 * Helpers of the hardening tests (test/integration/security, test/e2e/hardening): the local stack with fresh
 * tenants that call it over HTTP, a webhook receiver that can be taken down, the whole of a business's items in
 * the table (for before/after comparisons), and the `hardening:` summary lines the README's Reliability section quotes.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LocalStack, LocalStackOptions } from '#infra/local/stack.ts';
import type { Scope } from '#shared/auth/scopes.ts';

export interface Reply {
  status: number;
  body: any;
  headers: Headers;
}

export interface StackTenant {
  businessId: string;
  phoneNumberId: string;
  apiKey: string;
  keyId: string;
  call: (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<Reply>;
}

/** One summary line for the README's Reliability section. */
export const report = (line: string) => console.log(`hardening: ${line}`);

export const parseReply = async (res: Response): Promise<Reply> => {
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON */
  }
  return { status: res.status, body, headers: res.headers };
};

/** A random E.164 number whose last digit never hits a sandbox failure suffix. */
export const randomPhone = (): string => {
  let n = '+52155';
  while (n.length < 13) n += Math.floor(Math.random() * 10);
  return n + String(Math.floor(Math.random() * 8) + 1);
};

export async function startHardeningStack(options: LocalStackOptions = {}) {
  process.env.UPSTREAM_RETRY_BASE_MS ??= '20';
  process.env.UPSTREAM_TIMEOUT_MS ??= '2000';
  const { startLocalStack } = await import('#infra/local/stack.ts');
  const stack: LocalStack = await startLocalStack({
    port: 0, sandboxPort: 0, dynamodbEndpoint: process.env.DYNAMODB_ENDPOINT, demo: true, quiet: true, queueRetryDelayMs: 50, ...options,
  });
  const { createBusiness } = await import('#shared/business/repository.ts');
  const { createApiKey } = await import('#shared/auth/api-keys.ts');
  const { SCOPES } = await import('#shared/auth/scopes.ts');
  const { db, table } = await import('#shared/store/client.ts');
  const { ScanCommand } = await import('@aws-sdk/lib-dynamodb');

  const callWith = (apiKey: string) => async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    parseReply(await fetch(`${stack.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    }));

  const tenant = async (scopes: readonly Scope[] = SCOPES): Promise<StackTenant> => {
    const business = await createBusiness(`Hardening ${Math.random().toString(36).slice(2, 8)}`);
    const key = await createApiKey(business.businessId, [...scopes]);
    return { businessId: business.businessId, phoneNumberId: business.phoneNumberId!, apiKey: key.apiKey, keyId: key.keyId, call: callWith(key.apiKey) };
  };

  const sandbox = async (method: string, path: string, body?: unknown) =>
    parseReply(await fetch(`${stack.sandboxUrl}${path}`, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) }));

  /**
   * Every item of a business: its partitions (`B#{bid}`, `B#{bid}#...`) and the global pointers that name it.
   * Index entries are attributes of these items, so comparing them compares the GSIs too. Sorted, for equality.
   */
  const businessItems = async (bid: string) => {
    const items: Record<string, unknown>[] = [];
    let ExclusiveStartKey: Record<string, unknown> | undefined;
    do {
      const page = await db.send(new ScanCommand({
        TableName: table(),
        FilterExpression: 'pk = :pk OR begins_with(pk, :prefix) OR businessId = :bid',
        ExpressionAttributeValues: { ':pk': `B#${bid}`, ':prefix': `B#${bid}#`, ':bid': bid },
        ExclusiveStartKey,
      }));
      items.push(...(page.Items ?? []));
      ExclusiveStartKey = page.LastEvaluatedKey;
    } while (ExclusiveStartKey);
    return items.sort((a, b) => `${a.pk}|${a.sk}`.localeCompare(`${b.pk}|${b.sk}`));
  };

  return { stack, tenant, sandbox, businessItems, idle: (ms?: number) => stack.queues.idle(ms), stop: () => stack.stop() };
}

export type HardeningStack = Awaited<ReturnType<typeof startHardeningStack>>;

/** A webhook receiver that records what it gets and can answer 5xx for a while ("down"). */
export async function startReceiver() {
  const received: { url: string; headers: IncomingHttpHeaders; body: string; at: number }[] = [];
  let down = false;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      if (down) return void res.writeHead(503).end('down');
      received.push({ url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    setDown: (value: boolean) => {
      down = value;
    },
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
