/**
 * The fan-out's batched read of ordering-key partitions (one PartiQL statement for a batch's keys),
 * against DynamoDB Local: it must give each key exactly what a query of that key alone gives, also
 * when the keys hold more than one page between them, and for a crowded key; and the subscriptions of
 * the batch's businesses come back in the same statement.
 */
import './env.ts';
import { randomUUID } from 'node:crypto';
import { BatchWriteCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { newEvent, outboxPut } from '#shared/events/outbox.ts';
import { db, dynamo, table } from '#shared/store/client.ts';
import { createSubscription } from '#shared/webhooks/service.ts';
import { listSubscriptions, updateSubscription } from '#shared/webhooks/subscription-store.ts';
import { keys } from '#shared/store/keys.ts';
import { fanOutReader, readKeyPartition } from '#shared/webhooks/outbox-store.ts';
import { eventSk } from '#shared/events/ordering.ts';

const lane = (bid: string, webhookId: string, key: string, sk: string) => ({
  ...keys.deliveryLane(bid, webhookId, key, sk),
  type: 'lane',
  webhookId,
  laneSk: sk,
  deliveryId: randomUUID(),
  nextAttemptAt: new Date().toISOString(),
});

async function putAll(items: Record<string, unknown>[]) {
  for (let i = 0; i < items.length; i += 25) {
    await db.send(new BatchWriteCommand({ RequestItems: { [table()]: items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) } }));
  }
}

it('reads a batch of keys in one go, each exactly as a query of that key alone', async () => {
  // Prepare: 30 contacts with 0-3 outbox events and 0-2 lane items each (more than a page of results), and one
  // crowded contact with more lane items than one page holds.
  const bid = randomUUID();
  const contacts = Array.from({ length: 31 }, (_, i) => `c${i}`);
  const upTo = new Map<string, string>();
  const items: Record<string, unknown>[] = [];
  for (const [i, c] of contacts.entries()) {
    for (let k = 0; k < i % 4; k++) {
      const e = newEvent(bid, 'contact.updated', { contact_id: c, n: k });
      await db.send(new TransactWriteCommand({ TransactItems: [outboxPut(e)] }));
      upTo.set(c, eventSk(e));
    }
    const lanes = c === 'c30' ? 260 : i % 3;
    for (let k = 0; k < lanes; k++) items.push(lane(bid, `w${k % 2}`, `contact:${c}`, `2026-01-01T00:00:${String(k % 60).padStart(2, '0')}.${String(k).padStart(3, '0')}Z#${k}`));
  }
  await putAll(items);

  // Act
  const read = fanOutReader();
  const batched = await Promise.all(contacts.map((c) => read.partition(bid, `contact:${c}`, upTo.get(c) ?? '9999')));
  const alone = await Promise.all(contacts.map((c) => readKeyPartition(bid, `contact:${c}`, upTo.get(c) ?? '9999')));

  // Assess
  expect(batched).toEqual(alone);
  expect(batched.reduce((n, p) => n + p.outbox.length, 0)).toBe(45);
  expect(batched[2].lanes?.get('w0')).toHaveLength(1);
  expect(batched[2].lanes?.get('w1')).toHaveLength(1);
  // The crowded key is read whole for its outbox, and its lanes are left to the delivery worker's checks.
  expect(batched[30]).toMatchObject({ lanes: undefined });
});

it('leaves out events committed after the given one', async () => {
  const bid = randomUUID();
  const first = newEvent(bid, 'contact.created', { contact_id: 'k' });
  await new Promise((r) => setTimeout(r, 3));
  const second = newEvent(bid, 'contact.updated', { contact_id: 'k' });
  await db.send(new TransactWriteCommand({ TransactItems: [outboxPut(first), outboxPut(second)] }));

  const p = await fanOutReader().partition(bid, 'contact:k', eventSk(first));

  expect(p.outbox.map((o) => o.id)).toEqual([first.id]);
  expect(p.lanes?.size).toBe(0);
});

it("reads the businesses' subscriptions in the same statement as the keys' partitions, whole and in order", async () => {
  // Prepare: two businesses, one with two subscriptions (one disabled), one with none; an event of each.
  const [bid, other] = [randomUUID(), randomUUID()];
  const a = await createSubscription(bid, { name: 'a', url: 'https://example.com/a', events: ['*'] });
  const b = await createSubscription(bid, { name: 'b', url: 'https://example.com/b', events: ['contact.created'] });
  await updateSubscription(bid, b.id, { enabled: false, disabledReason: 'manual', disabledAt: new Date().toISOString() });
  const e = newEvent(bid, 'contact.created', { contact_id: 'k' });
  await db.send(new TransactWriteCommand({ TransactItems: [outboxPut(e)] }));
  const commands: string[] = [];
  dynamo.middlewareStack.add((next, context) => (args) => {
    commands.push(context.commandName ?? '?');
    return next(args);
  }, { step: 'initialize', name: 'partitionsTestCounter' });

  // Act: what one fan-out batch asks for, in one turn of the event loop.
  const read = fanOutReader();
  let got;
  try {
    got = await Promise.all([read.subscriptions(bid), read.partition(bid, 'contact:k', eventSk(e)), read.subscriptions(other), read.subscriptions(bid)]);
  } finally {
    dynamo.middlewareStack.remove('partitionsTestCounter');
  }

  // Assess: one request, and each answer as its own query would give it.
  expect(commands).toEqual(['ExecuteStatementCommand']);
  const [subs, partition, none, again] = got;
  expect(subs).toEqual(await listSubscriptions(bid, true));
  expect(subs.map((s) => s.id)).toEqual([a.id, b.id]);
  expect(subs[1]).toMatchObject({ enabled: false, disabledReason: 'manual', events: ['contact.created'], secret: expect.any(String) });
  expect(partition).toEqual(await readKeyPartition(bid, 'contact:k', eventSk(e)));
  expect(partition.outbox.map((o) => o.id)).toEqual([e.id]);
  expect(none).toEqual([]);
  expect(again).toBe(subs);
});
