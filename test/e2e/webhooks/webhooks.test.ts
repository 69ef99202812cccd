/**
 * Webhooks through the local stack over HTTP, as an integrator meets them: subscribe a real receiver,
 * cause events with ordinary API calls (a contact, a funnel move, an inbound message), and check what
 * arrives, in which order, signed how.
 */
import { startTestStack, type LocalStack } from '../../support/stack.ts';
import { startReceiver, verifyHex, verifyStandard, type Receiver } from '../../integration/webhooks/receiver.ts';

let stack: LocalStack;
let receiver: Receiver;

beforeAll(async () => {
  stack = await startTestStack({ demo: true, queueRetryDelayMs: 100 });
  receiver = await startReceiver();
}, 60_000);
afterAll(async () => {
  await receiver?.close();
  await stack?.stop();
});

const call = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${stack.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${stack.demo!.apiKey}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json().catch(() => undefined)) as any };
};

describe('webhooks end to end', () => {
  it('delivers the events of ordinary API calls, in order, verifiable by a receiver', async () => {
    // Prepare
    const sub = await call('POST', '/user-webhooks', { name: 'e2e', url: receiver.url, events: ['contact.created', 'contact.stage_changed', 'message.received'] });
    expect(sub.status).toBe(201);
    const secret = sub.body.data.secret as string;
    const stage = await call('POST', '/funnel/v1/stages', { name: 'Qualified' });
    expect(stage.status).toBe(201);
    const stageId = stage.body.stage?.id ?? stage.body.data?.id ?? stage.body.id;

    // Act
    const contact = await call('POST', '/contacts/v1', { phone_number: '+5215512345678', name: 'Ana' });
    expect(contact.status).toBe(201);
    const contactId = contact.body.contact.id;
    const moved = await call('POST', `/funnel/v1/contacts/${contactId}/move`, { stage_id: stageId });
    expect(moved.status).toBe(200);
    await fetch(`${stack.sandboxUrl}/__sandbox/inbound`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ from: '+5215599990000', text: 'hola' }) });
    await receiver.waitFor(4);
    await stack.queues.idle();

    // Assess
    const events = receiver.received.map((r) => JSON.parse(r.body));
    const names = events.map((e) => e.event);
    // (The inbound message from a new number creates a contact too: only Ana's events are compared.)
    expect(events.filter((e) => e.data.contact_id === contactId && e.event.startsWith('contact.')).map((e) => e.event)).toEqual(['contact.created', 'contact.stage_changed']);
    expect(names).toContain('message.received');
    for (const r of receiver.received) {
      expect(verifyHex(r.body, r.headers['x-webhook-signature'], secret)).toBe(true);
      expect(verifyStandard(r, secret)).toBe(true);
    }
    const changed = events.find((e) => e.event === 'contact.stage_changed').data;
    expect(changed).toMatchObject({ contact_id: contactId, phone_number: '+5215512345678', new_stage_id: stageId, new_stage_name: 'Qualified', moved_at: expect.any(String) });
    expect(Object.keys(changed)).toEqual(expect.arrayContaining(['previous_stage_id', 'previous_stage_name']));
    const received = events.find((e) => e.event === 'message.received').data;
    expect(received.messages[0]).toMatchObject({ from: expect.stringContaining('5215599990000'), text: { body: 'hola' } });

    const list = await call('GET', `/user-webhooks/${sub.body.data.id}/deliveries`);
    expect(list.body.data).toHaveLength(4);
    expect(list.body.data.every((d: any) => d.status === 'delivered' && d.attempts.length === 1 && d.attempts[0].statusCode === 200)).toBe(true);
  });
});
