/**
 * A real webhook receiver for tests and the benchmark: node:http on 127.0.0.1, port 0. It records every
 * request (headers and the raw body) and answers what `respond` says (default 200), and verifies
 * signatures exactly as the README tells receivers to.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

export interface Answer { status: number; headers?: Record<string, string>; delayMs?: number; body?: string | Buffer }
export type Respond = (req: Received, index: number) => Answer | Promise<Answer>;

export interface Receiver {
  url: string;
  received: Received[];
  respond: Respond;
  waitFor: (count: number, timeoutMs?: number) => Promise<Received[]>;
  close: () => Promise<void>;
}

export async function startReceiver(respond: Respond = () => ({ status: 200 })): Promise<Receiver> {
  const received: Received[] = [];
  let waiters: (() => void)[] = [];
  const receiver: Receiver = {
    url: '',
    received,
    respond,
    waitFor: async (count, timeoutMs = 15_000) => {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`receiver got ${received.length} requests, expected ${count}`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 50);
        });
      }
      return received;
    },
    close: () => new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const entry: Received = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      const index = received.length;
      received.push(entry);
      const answer = await receiver.respond(entry, index);
      if (answer.delayMs) await new Promise((r) => setTimeout(r, answer.delayMs));
      res.writeHead(answer.status, answer.headers ?? {});
      res.end(answer.body);
      const w = waiters;
      waiters = [];
      w.forEach((f) => f());
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return receiver;
}

/** The README's check: HMAC-SHA256 of the compact JSON of the parsed payload, compared in constant time. */
export function verifyHex(body: string, signature: string | string[] | undefined, secret: string): boolean {
  if (typeof signature !== 'string') return false;
  const expected = createHmac('sha256', secret).update(JSON.stringify(JSON.parse(body))).digest();
  const given = Buffer.from(signature, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The Standard Webhooks check (signature and timestamp tolerance), by the reference library. */
export function verifyStandard(r: Received, secret: string): boolean {
  try {
    new Webhook(secret).verify(r.body, r.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
}

/** Receivers a test file starts, all closed together in its afterAll. */
export function receiverPool() {
  const started: Receiver[] = [];
  return {
    start: async (respond?: Respond): Promise<Receiver> => {
      const r = await startReceiver(respond);
      started.push(r);
      return r;
    },
    closeAll: () => Promise.all(started.map((r) => r.close())),
  };
}
