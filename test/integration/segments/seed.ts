/**
 * Writes contact items straight into the table (the shape the contacts area writes: the record, and for an
 * active contact the filter projection), so segment tests do not depend on the contacts endpoints.
 */
import { randomUUID } from 'node:crypto';
import pLimit from 'p-limit';
import { BatchWriteCommand, type BatchWriteCommandOutput } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';
import type { Contact } from '#shared/contacts/model.ts';
import { projectionAttributes } from '#shared/contacts/filters/projection.ts';

let phoneSeq = 0;

export function contact(fields: Partial<Contact> = {}): Contact {
  const now = new Date().toISOString();
  phoneSeq += 1;
  return {
    id: randomUUID(),
    phone_number: `+5255${String(Date.now() % 1e4).padStart(4, '0')}${String(phoneSeq).padStart(4, '0')}`,
    name: null,
    email: null,
    tags: [],
    custom_fields: {},
    assigned_agent_id: null,
    funnel_stage_id: null,
    origin: 'api',
    opted_out: false,
    created_at: now,
    updated_at: now,
    last_contact_at: null,
    deleted_at: null,
    ...fields,
  };
}

export const contactItem = (bid: string, c: Contact) => ({
  ...keys.contact(bid, c.id),
  type: 'contact',
  businessId: bid,
  version: 1,
  ...c,
  ...(c.deleted_at ? {} : projectionAttributes(bid, c)),
});

/** Writes `contacts` in batches of 25, `parallel` batches at a time (DynamoDB Local takes tens of thousands in seconds). */
export async function seedContacts(bid: string, contacts: Contact[], parallel = 1): Promise<Contact[]> {
  const batches = Array.from({ length: Math.ceil(contacts.length / 25) }, (_, i) => contacts.slice(i * 25, i * 25 + 25));
  const writeBatch = async (batch: Contact[]) => {
    let requests: any[] | undefined = batch.map((c) => ({ PutRequest: { Item: contactItem(bid, c) } }));
    while (requests && requests.length > 0) {
      const res: BatchWriteCommandOutput = await db.send(new BatchWriteCommand({ RequestItems: { [table()]: requests } }));
      requests = res.UnprocessedItems?.[table()];
    }
  };
  const limit = pLimit(parallel);
  await Promise.all(batches.map((batch) => limit(() => writeBatch(batch))));
  return contacts;
}

export const daysAgoIso = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString();
