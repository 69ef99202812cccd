/**
 * A broadcast's completion tally racing its delivery-status webhooks: the counts it ends with must equal what
 * its recipients' own records say, however the two interleave (issue: `total 5, sent 4, skipped 2`).
 */
import { randomUUID } from 'node:crypto';
import { startQueueSink, type QueueSink } from '../../support/queues.ts';
import type { MessageStatus } from '#shared/broadcasts/status.ts';
import { startUpstream } from './upstream.ts';

const upstream = await startUpstream();
const { invoke, newTenant } = await import('../../support/api.ts');
const { getBroadcast, transition } = await import('#shared/broadcasts/repository.ts');
const { claimRecipient, putRecipients, settleRecipient } = await import('#shared/broadcasts/recipients.ts');
const { addCounts, tallyRecipients } = await import('#shared/broadcasts/counts.ts');
const { complete } = await import('#shared/broadcasts/completion.ts');
const { onMessageStatus } = await import('#shared/broadcasts/status.ts');

let queues: QueueSink;
beforeAll(async () => {
  queues = await startQueueSink();
});
afterAll(async () => {
  await queues?.close();
  await upstream.close();
});

const RECIPIENTS = 30;
const ROUNDS = 8;
const STATUSES: MessageStatus[] = ['delivered', 'read', 'failed'];

it(`keeps exact counts when ${RECIPIENTS} status webhooks race the completion tally (${ROUNDS} rounds)`, async () => {
  const wrong: string[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    // Prepare: a running broadcast whose recipients have all been sent
    const t = await newTenant(['messages:write', 'messages:read']);
    const created = await invoke('POST /broadcasts/v1', { apiKey: t.apiKey, body: { name: `Race ${round}`, templateName: 'order_update', template_parameters: ['x', 'y'], contact_ids: [randomUUID()] } });
    expect(created.status).toBe(201);
    const id = created.body.data.id as string;
    await transition(t.businessId, id, ['running'], 'running', { started_at: new Date().toISOString(), c_total: RECIPIENTS });
    const contacts = Array.from({ length: RECIPIENTS }, () => randomUUID());
    const messageIds = contacts.map(() => randomUUID());
    await putRecipients(t.businessId, id, contacts.map((c, seq) => ({ contact_id: c, seq, state: 'pending' as const, phone_number: `+52155${String(seq).padStart(8, '0')}`, request: { type: 'template' } })));
    await Promise.all(contacts.map(async (c, i) => {
      await claimRecipient(t.businessId, id, c, 'lease', Date.now() + 60_000);
      await settleRecipient(t.businessId, id, c, { state: 'sent', message_id: messageIds[i]!, wamid: `wamid.${i}` }, 'lease');
    }));
    await addCounts(t.businessId, id, { sent: RECIPIENTS });
    const b = (await getBroadcast(t.businessId, id))!;

    // Act: the completion and every status at once (a read also after its delivered, for half of them)
    const statuses = messageIds.map(async (m, i) => {
      const first = STATUSES[i % STATUSES.length]!;
      await onMessageStatus(t.businessId, m, first);
      if (first === 'delivered' && i % 2 === 0) await onMessageStatus(t.businessId, m, 'read');
    });
    const [completed] = await Promise.all([complete(b), ...statuses]);

    // Assess
    expect(completed).toBe(true);
    const stored = (await getBroadcast(t.businessId, id))!;
    const { counts } = await tallyRecipients(t.businessId, id);
    expect(stored.status).toBe('completed');
    const { pending: _pending, ...storedCounts } = stored.counts as typeof stored.counts & { pending?: number };
    if (JSON.stringify(storedCounts) !== JSON.stringify(counts)) wrong.push(`round ${round}: stored ${JSON.stringify(storedCounts)}, recipients ${JSON.stringify(counts)}`);
  }
  expect(wrong).toEqual([]);
}, 180_000);

it('counts the recipients of a broadcast cancelled while its audience was being frozen (total 0 beside cancelled 20 before)', async () => {
  // Prepare: an immediate broadcast whose audience has been written but which never started, then cancelled
  const { sweep } = await import('#shared/broadcasts/completion.ts');
  const t = await newTenant(['messages:write', 'messages:read']);
  const created = await invoke('POST /broadcasts/v1', { apiKey: t.apiKey, body: { name: 'Cancelled while freezing', templateName: 'order_update', template_parameters: ['x', 'y'], contact_ids: [randomUUID()] } });
  const id = created.body.data.id as string;
  const contacts = Array.from({ length: 20 }, () => randomUUID());
  await putRecipients(t.businessId, id, contacts.map((c, seq) => ({ contact_id: c, seq, state: seq < 2 ? 'skipped' as const : 'pending' as const, phone_number: `+52155${String(seq).padStart(8, '0')}`, request: { type: 'template' } })));
  expect((await invoke('POST /broadcasts/v1/{id}/cancel', { apiKey: t.apiKey, params: { id } })).status).toBe(200);

  // Act: the run's sweep, until it is done
  let outcome: string;
  do outcome = await sweep((await getBroadcast(t.businessId, id))!);
  while (outcome === 'more');

  // Assess
  expect(outcome).toBe('done');
  const shown = (await invoke('GET /broadcasts/v1/{id}', { apiKey: t.apiKey, params: { id } })).body.data;
  expect(shown).toMatchObject({ status: 'cancelled', started_at: null, counts: { total: 20, skipped: 2, cancelled: 18, sent: 0, pending: 0 } });
});
