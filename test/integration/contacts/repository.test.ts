import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { newTenant } from '../../support/api.ts';
import { findOrCreateContactByPhone, getContact, recordContactActivity } from '#shared/contacts/repository.ts';
import { db, table } from '#shared/store/client.ts';
import { eventSink } from '../../support/queues.ts';

// The events these tests look for are the messages the SQS stand-in received.
const { eventsOf } = eventSink();

describe('contacts repository (used by messaging)', () => {
  it('finds or creates one contact per phone under 50 concurrent calls, emitting one contact.created', async () => {
    // Prepare
    const t = await newTenant();

    // Act
    const results = await Promise.all(Array.from({ length: 50 }, () => findOrCreateContactByPhone(t.businessId, '5215512345678', { name: 'Inbound' })));

    // Assess
    expect(new Set(results.map((r) => r.contact.id)).size).toBe(1);
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(results[0].contact).toMatchObject({ phone_number: '+5215512345678', origin: 'inbound', name: 'Inbound' });
    const items = (await db.send(new QueryCommand({ TableName: table(), KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)', ExpressionAttributeValues: { ':pk': `B#${t.businessId}`, ':p': 'CONTACT#' }, ConsistentRead: true }))).Items!;
    expect(items).toHaveLength(1);
    const created = eventsOf(t.businessId, 'contact.created');
    expect(created).toHaveLength(1);
  });

  it('records activity forward only', async () => {
    const t = await newTenant();
    const { contact } = await findOrCreateContactByPhone(t.businessId, '+14155551111', { origin: 'outbound' });

    await recordContactActivity(t.businessId, contact.id, '2026-01-02T00:00:00.000Z');
    await recordContactActivity(t.businessId, contact.id, '2026-01-01T00:00:00.000Z');

    const got = await getContact(t.businessId, contact.id);
    expect(got).toMatchObject({ origin: 'outbound', last_contact_at: '2026-01-02T00:00:00.000Z' });
  });
});
