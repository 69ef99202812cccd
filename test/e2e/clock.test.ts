/**
 * The local stack's clock runs the scheduled function as its EventBridge rule runs it deployed: an event whose
 * publish was lost reaches its webhook, and a send whose settle write was lost is failed as unconfirmed. In a table
 * of its own (the sweeps act on every business of their table), with a minute of 100 ms and sends unconfirmed after 1 s.
 */
import { randomUUID } from 'node:crypto';
import { startTestStack, type LocalStack } from '../support/stack.ts';
import { callWith, startReceiver } from '../support/http.ts';
import { waitFor } from '../support/wait.ts';

process.env.PENDING_SEND_TIMEOUT_SECONDS = '1';
// A re-published event's delivery waits out the receiver time-out plus 5 s (a first attempt may still be in flight).
process.env.WEBHOOK_TIMEOUT_MS = '1000';

let stack: LocalStack;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  stack = await startTestStack({ tableName: `clock-${Date.now()}`, clock: true, clockMinuteMs: 100, demo: true, queueRetryDelayMs: 50 });
  receiver = await startReceiver();
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await receiver?.stop();
});

const call = () => callWith(stack.url, stack.demo!.apiKey);

it('publishes an event whose publish was lost', async () => {
  // Prepare: a subscription, then an event committed two minutes ago whose publish never happened.
  const { db, table } = await import('#shared/store/client.ts');
  const { TransactWriteCommand } = await import('@aws-sdk/lib-dynamodb');
  const { newEvent, outboxPut } = await import('#shared/events/outbox.ts');
  expect((await call()('POST', '/user-webhooks', { name: 'clock', url: receiver.url, events: ['contact.deleted'] })).status).toBe(201);
  const lost = { ...newEvent(stack.demo!.businessId, 'contact.deleted', { contact_id: `lost-${randomUUID()}` }), createdAt: new Date(Date.now() - 120_000).toISOString() };
  expect(table()).toBe(stack.tableName);

  // Act
  await db.send(new TransactWriteCommand({ TransactItems: [outboxPut(lost)] }));

  // Assess: the clock's sweep published it, and the subscription got it.
  const got = await waitFor('the lost event at the receiver', async () => receiver.received.find((r) => r.body.includes(lost.data.contact_id as string)));
  expect(JSON.parse(got.body)).toEqual({ event: 'contact.deleted', data: { contact_id: lost.data.contact_id } });
});

it('fails a send whose settle write was lost, as unconfirmed', async () => {
  // Prepare: the table write that settles a send after the upstream's answer fails once (the function "died").
  const { dynamo } = await import('#shared/store/client.ts');
  const name = `clock-settle-crash-${randomUUID()}`;
  let armed = true;
  dynamo.middlewareStack.add((next) => async (args) => {
    const input = JSON.stringify((args as { input?: unknown }).input ?? {});
    if (armed && input.includes('"TransactItems"') && input.includes('message.sent')) {
      armed = false;
      throw Object.assign(new Error('Injected: the function died before the settle write'), { name: 'InjectedCrash' });
    }
    return next(args);
  }, { step: 'initialize', name });

  // Act: a send with the client's own callback data (no status webhook will name the message).
  let sent;
  try {
    sent = await call()('POST', '/messages/v1', { to: '+5215512345671', type: 'template', templateName: 'hello_world', language: 'en_US', biz_opaque_callback_data: 'order-7' });
  } finally {
    dynamo.middlewareStack.remove(name);
  }
  expect(armed).toBe(false);
  expect(sent.status).toBe(500);

  // Assess: within a second or two the clock's sweep failed it as unconfirmed.
  const conversations = (await call()('GET', '/conversations/v1')).body.conversations as { id: string; phoneNumber: string }[];
  const conversation = conversations.find((c) => c.phoneNumber === '+5215512345671')!;
  const failed = await waitFor('the send failed as unconfirmed', async () => {
    const messages = (await call()('GET', `/conversations/v1/${conversation.id}/messages`)).body.messages as { status: string; error?: { code: string } }[];
    return messages.find((m) => m.status === 'failed');
  });
  expect(failed.error).toMatchObject({ code: 'send_unconfirmed' });
});
