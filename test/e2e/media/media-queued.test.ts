/**
 * A media send that outlasts the wait budget: 202 with data.status queued, then the media worker
 * finishes it (the message becomes sent, with message.sent in the outbox), or records it failed; a retry of such a
 * message applies the media rules again. The budget is set to zero here.
 */
import type { LocalStack } from '#infra/local/stack.ts';
import { photoJpeg, smallPng } from '../../integration/media/files.ts';
import { customerWrites, startFileServer } from '../../support/http.ts';

let stack: LocalStack;
let files: Awaited<ReturnType<typeof startFileServer>>;
let filesUrl: string;
const to = '+5215550002222';
const png = await smallPng();
const MB = 1024 * 1024;
/** The file server's files, by path: a test may change one between two requests. */
const served: Record<string, Buffer> = { '/sandbox-unreachable/pic.png': png };

beforeAll(async () => {
  process.env.MEDIA_WAIT_BUDGET_MS = '0';
  const { startTestStack } = await import('../../support/stack.ts');
  stack = await startTestStack({ demo: true, queueRetryDelayMs: 50 });
  files = await startFileServer(served);
  filesUrl = files.url;
  await customerWrites(stack, to);
}, 120_000);

afterAll(async () => {
  await files?.stop();
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

it('finishes a template whose header link is proxied past the budget: sent with the header by id', async () => {
  // Act
  const res = await fetch(`${stack.url}/messages/v1`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.demo!.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ to, type: 'template', templateName: 'promo_header', template_parameters: ['Ana'], header_media: { type: 'image', url: `${filesUrl}/sandbox-unreachable/pic.png` } }),
  });
  const body = (await res.json()) as any;
  await stack.queues.idle();
  const message = (await (await fetch(`${stack.url}/messages/v1/${body.data.id}`, { headers: { authorization: `Bearer ${stack.demo!.apiKey}` } })).json()) as any;
  const sent = (await (await fetch(`${stack.sandboxUrl}/__sandbox/sent?to=${encodeURIComponent(to)}`)).json()) as any[];

  // Assess
  expect(res.status).toBe(202);
  expect(body.data).toMatchObject({ status: 'queued', messageType: 'template' });
  expect(message.message).toMatchObject({ status: 'sent', messageType: 'template' });
  const header = sent.at(-1).template.components.find((c: any) => c.type === 'header').parameters[0];
  expect(header).toEqual({ type: 'image', image: { id: expect.stringMatching(/^\d+$/) } });
}, 60_000);

const auth = () => ({ authorization: `Bearer ${stack.demo!.apiKey}`, 'content-type': 'application/json' });
const sentCount = async () => ((await (await fetch(`${stack.sandboxUrl}/__sandbox/sent?to=${encodeURIComponent(to)}`)).json()) as unknown[]).length;
const readMessage = async (id: string) => (await (await fetch(`${stack.url}/messages/v1/${id}`, { headers: auth() })).json()) as any;

/**
 * A queued image send by a link at `path` that the media worker fails: a JPEG's first bytes, then 6 MB that decode to
 * nothing (compression cannot help; no autoConvert). Answers the send's status and the message id once the worker is done.
 */
async function failedQueuedImage(path: string): Promise<{ status: number; id: string }> {
  served[path] = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(6 * MB, 0x42)]);
  const res = await fetch(`${stack.url}/messages/v1`, { method: 'POST', headers: auth(), body: JSON.stringify({ to, type: 'image', image: { link: `${filesUrl}${path}` } }) });
  const id = ((await res.json()) as any).data.id;
  await stack.queues.idle();
  return { status: res.status, id };
}

it('fails a queued image the worker cannot bring under 5 MB with the upstream code for it, and a retry sends nothing while the file is still too large', async () => {
  // Prepare
  const { status, id } = await failedQueuedImage('/corrupt.jpg');
  const failed = await readMessage(id);
  const before = await sentCount();

  // Act: the file at the link is now past what any conversion may reach
  served['/corrupt.jpg'] = Buffer.alloc(101 * MB);
  const retry = await fetch(`${stack.url}/messages/v1/${id}/retry`, { method: 'POST', headers: auth() });
  const retried = (await retry.json()) as any;

  // Assess: stored with the upstream's code and the contract's name for it (131053 file_too_large, not the HTTP status),
  // as the retry reports it, and nothing went upstream
  expect(status).toBe(202);
  expect(failed.message).toMatchObject({ status: 'failed', error: { code: '131053', error: 'file_too_large' } });
  expect(retry.status).toBe(400);
  expect(retried).toMatchObject({ error: 'retry_failed', code: '131053', data: { id, status: 'failed' } });
  expect(await sentCount()).toBe(before);
}, 60_000);

it('answers a retry whose file the media worker must prepare for longer than the budget with 503, leaving the message failed as it was', async () => {
  // Prepare
  const { id } = await failedQueuedImage('/later.jpg');
  const before = await sentCount();

  // Act: the file is now one compression can bring under 5 MB, which the worker (budget 0 here) cannot finish in time
  served['/later.jpg'] = await photoJpeg(3000, 2200, 24);
  const retry = await fetch(`${stack.url}/messages/v1/${id}/retry`, { method: 'POST', headers: auth() });
  const answer = (await retry.json()) as any;
  await stack.queues.idle();
  const after = await readMessage(id);

  // Assess
  expect(retry.status).toBe(503);
  expect(retry.headers.get('retry-after')).toBe('5');
  expect(answer).toMatchObject({ error: 'service_unavailable', message: expect.stringContaining('still being prepared') });
  expect(after.message).toMatchObject({ status: 'failed', error: { code: '131053', error: 'file_too_large' } });
  expect(await sentCount()).toBe(before);
}, 90_000);
