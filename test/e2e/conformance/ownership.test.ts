/**
 * "403 forbidden: ... the resource belongs to another account" for conversations and messages: another
 * business's ids answer 403 on every route that takes them; ids nobody holds answer 404.
 */
import { startTestStack, type LocalStack } from '../../support/stack.ts';

let stack: LocalStack;
let other: string;

beforeAll(async () => {
  stack = await startTestStack({ demo: true });
  const { createBusiness } = await import('#shared/business/repository.ts');
  const { createApiKey } = await import('#shared/auth/api-keys.ts');
  const { SCOPES } = await import('#shared/auth/scopes.ts');
  const b = await createBusiness('Other');
  other = (await createApiKey(b.businessId, [...SCOPES])).apiKey;
}, 60_000);
afterAll(() => stack?.stop());

const call = async (key: string, method: string, path: string, body?: unknown) => {
  const res = await fetch(`${stack.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
};

it('answers 403 for another account\'s conversation and message ids, 404 for unknown ones', async () => {
  // Prepare: the demo business gets an inbound message (a conversation) and a failed send (a retryable message).
  const to = '+5215511112222';
  await fetch(`${stack.sandboxUrl}/__sandbox/inbound`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ from: to, text: 'hola' }) });
  await stack.queues.idle();
  const own = stack.demo!.apiKey;
  const conversationId = (await call(own, 'GET', '/conversations/v1')).body.conversations[0].id;
  const failed = await call(own, 'POST', '/messages/v1', { to: '+5215500130472', content: 'x' });
  expect(failed.body.data.status).toBe('failed');
  const messageId = failed.body.data.id;
  const unknown = '00000000-0000-4000-8000-000000000000';

  // Act + Assess
  const probes: [string, string, unknown?][] = [
    ['GET', `/conversations/v1/${conversationId}`],
    ['GET', `/conversations/v1/${conversationId}/messages`],
    ['PATCH', `/conversations/v1/${conversationId}/ai`, { aiEnabled: false }],
    ['POST', `/conversations/v1/${conversationId}/ai/pause`, { duration: 5 }],
    ['GET', `/messages/v1/${messageId}`],
    ['POST', `/messages/v1/${messageId}/retry`],
  ];
  for (const [method, path, body] of probes) {
    const res = await call(other, method, path, body);
    expect([path, res.status, res.body.error]).toEqual([path, 403, 'forbidden']);
    const missing = await call(other, method, path.replace(conversationId, unknown).replace(messageId, unknown), body);
    expect([path, missing.status, missing.body.error]).toEqual([path, 404, 'not_found']);
  }
  // The owner still reads its own records.
  expect((await call(own, 'GET', `/conversations/v1/${conversationId}`)).status).toBe(200);
  expect((await call(own, 'GET', `/messages/v1/${messageId}`)).status).toBe(200);
}, 60_000);
