/**
 * Contacts written straight into the table in the contacts area's item shape (record, filter projection and
 * phone claim), so that broadcast tests do not depend on the contacts endpoints. Import it only after the
 * local stack has started (it loads the table client, which reads the environment once).
 */
import { randomUUID } from 'node:crypto';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';
import { projectionAttributes } from '#shared/contacts/filters/projection.ts';
import type { Contact } from '#shared/contacts/model.ts';

let seq = Math.floor(Math.random() * 1e5);
export const phone = () => `+52155${String(Date.now() % 1e4).padStart(4, '0')}${String(++seq).padStart(5, '0')}`;

export function contact(fields: Partial<Contact> = {}): Contact {
  const now = new Date().toISOString();
  return {
    id: randomUUID(), phone_number: phone(), name: null, email: null, tags: [], custom_fields: {}, assigned_agent_id: null,
    funnel_stage_id: null, origin: 'api', opted_out: false, created_at: now, updated_at: now, last_contact_at: null, deleted_at: null,
    ...fields,
  };
}

export async function seedContacts(businessId: string, contacts: Contact[]): Promise<Contact[]> {
  const items = contacts.flatMap((c) => [
    { ...keys.contact(businessId, c.id), type: 'contact', businessId, version: 1, ...c, ...(c.deleted_at ? {} : projectionAttributes(businessId, c)) },
    ...(c.deleted_at ? [] : [{ ...keys.contactPhone(businessId, c.phone_number!), type: 'contactPhone', contactId: c.id }]),
  ]);
  for (let i = 0; i < items.length; i += 25) {
    let requests: any[] | undefined = items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } }));
    while (requests && requests.length > 0) {
      const res = await db.send(new BatchWriteCommand({ RequestItems: { [table()]: requests } }));
      requests = res.UnprocessedItems?.[table()] as any[] | undefined;
    }
  }
  return contacts;
}
