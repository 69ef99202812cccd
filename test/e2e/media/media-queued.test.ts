/**
 * A media send that outlasts the wait budget: 202 with data.status queued, then the media worker
 * finishes it (the message becomes sent, with message.sent in the outbox). The budget is set to zero here.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LocalStack } from '#infra/local/stack.ts';
import { smallPng } from '../../integration/media/files.ts';

let stack: LocalStack;
let files: http.Server;
let filesUrl: string;
const to = '+5215550002222';
const png = await smallPng();

beforeAll(async () => {
  process.env.MEDIA_WAIT_BUDGET_MS = '0';
  const { startLocalStack } = await import('#infra/local/stack.ts');
  stack = await startLocalStack({ port: 0, sandboxPort: 0, dynamodbEndpoint: process.env.DYNAMODB_ENDPOINT, demo: true, quiet: true, queueRetryDelayMs: 50 });
  files = http.createServer((req, res) => {
    if (!req.url!.endsWith('.png')) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-length': String(png.length) });
    res.end(req.method === 'HEAD' ? undefined : png);
  });
  await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
  filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
  await fetch(`${stack.sandboxUrl}/__sandbox/inbound`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ from: to, text: 'hola' }) });
  await stack.queues.idle();
}, 120_000);

afterAll(async () => {
  files?.closeAllConnections();
  await new Promise((resolve) => files?.close(resolve));
  await stack?.stop();
});

it('answers 202 queued past the budget, and the worker completes the send', async () => {
  // Act
  const res = await fetch(`${stack.url}/messages/v1`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.demo!.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ to, type: 'image', image: { link: `${filesUrl}/sandbox-unreachable/pic.png` } }),
  });
  const body = (await res.json()) as any;
  await stack.queues.idle();
  const message = (await (await fetch(`${stack.url}/messages/v1/${body.data.id}`, { headers: { authorization: `Bearer ${stack.demo!.apiKey}` } })).json()) as any;
  // Assess
  expect(res.status).toBe(202);
  expect(body.data).toMatchObject({ id: expect.any(String), status: 'queued', messageType: 'image' });
  expect(JSON.stringify(message)).toContain('"status":"sent"');
}, 60_000);
