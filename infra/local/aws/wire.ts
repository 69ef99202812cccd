/**
 * What every local AWS stand-in in this folder needs from node:http: read a request's body, answer JSON, and
 * listen on loopback (port 0 picks a free one). Each stand-in is its own small server, so a service's endpoint
 * variable (`AWS_ENDPOINT_URL_<SERVICE>`) names exactly one of them.
 */
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export function replyJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...headers, 'content-type': headers['content-type'] ?? 'application/json' });
  res.end(JSON.stringify(body));
}

export interface Listening {
  url: string;
  close(): Promise<void>;
}

export async function listen(port: number, handler: RequestListener): Promise<Listening> {
  const server: Server = createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
