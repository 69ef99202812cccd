/**
 * Closing a conversation: the one operation that emits conversation.closed. The agent's count drops, the
 * next message opens a new conversation, and a second close changes nothing.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestStack, type LocalStack } from '../../support/stack.ts';

let stack: LocalStack;
let receiver: Server;
const events: { event: string; data: any }[] = [];

beforeAll(async () => {
  stack = await startTestStack({ demo: true });
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c)).on('end', () => {
      events.push(JSON.parse(body));
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await new Promise((r) => receiver?.close(r));
});

const api = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${stack.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${stack.demo!.apiKey}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
};
const inbound = async (from: string) => {
  await fetch(`${stack.sandboxUrl}/__sandbox/inbound`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ from, text: 'hola' }) });
  await stack.queues.idle();
};

it('closes a conversation, emits conversation.closed once, frees the agent, and the next message opens a new one', async () => {
  // Prepare: a subscriber, an agent, a contact assigned to the agent with an open conversation.
  const port = (receiver.address() as AddressInfo).port;
  expect((await api('POST', '/user-webhooks', { name: 'closed', url: `http://127.0.0.1:${port}/`, events: ['conversation.closed'] })).status).toBe(201);
  const { addAgent } = await import('#shared/team/repository.ts');
  const agent = await addAgent(stack.demo!.businessId, { email: 'closer@example.com' });
  const from = '+5215599990001';
  await inbound(from);
  const contact = (await api('GET', `/contacts/v1?search=${encodeURIComponent('5599990001')}`)).body.contacts[0];
  expect((await api('PATCH', `/contacts/v1/${contact.id}`, { assigned_agent_id: agent.id })).status).toBe(200);
  const conversations = (await api('GET', '/conversations/v1')).body.conversations;
  const first = conversations.find((c: any) => c.contactId === contact.id);
  const agentCount = async () => (await api('GET', '/team/v1')).body.agents.find((a: any) => a.id === agent.id).assigned_conversations;
  expect(await agentCount()).toBe(1);

  // Act
  const closed = await api('POST', `/conversations/v1/${first.id}/close`);
  const again = await api('POST', `/conversations/v1/${first.id}/close`);
  const countAfterClose = await agentCount();
  await inbound(from);

  // Assess
  expect(closed.status).toBe(200);
  expect(closed.body.conversation).toMatchObject({ id: first.id, status: 'closed', closedAt: expect.any(String) });
  expect(again.status).toBe(200);
  expect(countAfterClose).toBe(0);
  expect(await agentCount()).toBe(1); // the new conversation is assigned to the contact's agent again
  const after = (await api('GET', '/conversations/v1')).body.conversations.filter((c: any) => c.contactId === contact.id);
  expect(after.map((c: any) => c.status).sort()).toEqual(['closed', 'open']);
  expect(after.find((c: any) => c.status === 'open').id).not.toBe(first.id);
  await stack.queues.idle();
  const deadline = Date.now() + 15_000;
  while (!events.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  await new Promise((r) => setTimeout(r, 500));
  expect(events).toEqual([
    { event: 'conversation.closed', data: { conversation_id: first.id, contact_id: contact.id, phone_number: from, assigned_agent_id: agent.id, closed_at: closed.body.conversation.closedAt } },
  ]);
  expect((await api('POST', '/conversations/v1/00000000-0000-4000-8000-000000000000/close')).status).toBe(404);
}, 60_000);

it('keeps the customer\'s 24-hour window in the conversation a send opens after a close', async () => {
  // Prepare: the customer writes, then the conversation is closed
  const from = '+5215599990002';
  await inbound(from);
  const before = (await api('GET', '/conversations/v1')).body.conversations.find((c: any) => c.phoneNumber === from);
  expect((await api('POST', `/conversations/v1/${before.id}/close`)).status).toBe(200);

  // Act: the business writes first
  const sent = await api('POST', '/messages/v1', { to: from, content: 'after close' });
  const next = await api('GET', `/conversations/v1/${sent.body.data.conversationId}`);

  // Assess
  expect(sent.status).toBe(200);
  expect(sent.body.data.conversationId).not.toBe(before.id);
  expect(next.body.conversation).toMatchObject({ windowOpen: true, windowExpiresAt: before.windowExpiresAt, lastInboundAt: before.lastInboundAt });
}, 60_000);

it('closes a conversation the business started (no inbound message, no window to carry over)', async () => {
  // Prepare: a template opens a conversation with a number that never wrote
  const to = '+5215599990003';
  const sent = await api('POST', '/messages/v1', { to, type: 'template', templateName: 'hello_world', language: 'en_US' });
  expect(sent.status).toBe(200);

  // Act
  const closed = await api('POST', `/conversations/v1/${sent.body.data.conversationId}/close`);
  const next = await api('POST', '/messages/v1', { to, type: 'template', templateName: 'hello_world', language: 'en_US' });

  // Assess
  expect(closed.status).toBe(200);
  expect(closed.body.conversation).toMatchObject({ status: 'closed', lastInboundAt: null });
  const reopened = await api('GET', `/conversations/v1/${next.body.data.conversationId}`);
  expect(reopened.body.conversation).toMatchObject({ status: 'open', windowOpen: false, lastInboundAt: null });
}, 60_000);
