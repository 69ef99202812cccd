/**
 * The business's per-minute message budget (shared by its keys and its broadcasts) refuses a send before anything
 * is recorded or sent: the recording made beside the budget check is taken back, and the Idempotency-Key freed.
 */
import { randomUUID } from 'node:crypto';
import { startHarness, type Harness } from './harness.ts';

process.env.LIMIT_REQUESTS_PER_MINUTE = '1000000';
process.env.LIMIT_MESSAGES_PER_MINUTE = '3';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h?.stop());

it('a send over the business budget answers 429 and leaves no message, no upstream send and a free key', async () => {
  // Prepare: two keys of one business (each within its own limit of 3), a customer who wrote in; all within one minute.
  const secondsLeft = 60 - (Math.floor(Date.now() / 1000) % 60);
  if (secondsLeft < 25) await new Promise((r) => setTimeout(r, secondsLeft * 1000 + 100));
  const { t, to } = await h.openChat();
  const { createApiKey } = await import('#shared/auth/api-keys.ts');
  const other = await createApiKey(t.businessId, ['messages:write', 'messages:read']);
  for (const [i, apiKey] of [t.apiKey, t.apiKey, other.apiKey].entries()) expect((await h.send(apiKey, { to, content: `ok ${i}` })).status).toBe(200);

  // Act: the second key is within its own limit, the business is not.
  const key = randomUUID();
  const refused = await h.send(other.apiKey, { to, content: 'over budget' }, { 'idempotency-key': key });

  // Assess: the contract's 429; nothing went out or stays recorded; the key was not kept for the refusal.
  expect(refused.status).toBe(429);
  expect(refused.body).toEqual({ error: 'rate_limited', message: expect.stringContaining("business's limit of 3"), retry_after: expect.any(Number) });
  expect(refused.headers).toMatchObject({ 'x-ratelimit-remaining': '0', 'retry-after': expect.any(String), 'x-ratelimit-limit': '3' });
  expect((await h.sent(to)).filter((p) => p.text?.body === 'over budget')).toHaveLength(0);
  const conversationId = (await h.invoke('GET /conversations/v1', { apiKey: t.apiKey })).body.conversations[0].id;
  const messages = (await h.invoke('GET /conversations/v1/{id}/messages', { apiKey: t.apiKey, params: { id: conversationId } })).body.messages;
  expect(messages.map((m: any) => m.content?.body)).not.toContain('over budget');
  expect(messages.filter((m: any) => m.direction === 'outbound')).toHaveLength(3);
  const again = await h.send(other.apiKey, { to, content: 'over budget' }, { 'idempotency-key': key });
  expect(again.status).toBe(429);
  expect(again.headers['idempotent-replayed']).toBeUndefined();
});
