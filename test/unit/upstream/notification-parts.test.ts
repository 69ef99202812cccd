/**
 * A notification too large for one queue message is cut into notifications of the same shape, each within the
 * size, that together hold every message and status once, in order, each part of messages with its senders'
 * contacts entries.
 */
import { notificationParts } from '#shared/upstream/notification-parts.ts';

const metadata = { display_phone_number: '15550001234', phone_number_id: '1055' };
const message = (i: number) => ({ from: `52155${i}`, id: `wamid.m${i}`, timestamp: '1', type: 'text', text: { body: 'x'.repeat(900) } });
const status = (i: number) => ({ id: `wamid.s${i}`, status: 'delivered', timestamp: '1', recipient_id: '1' });
const notification = (entries: Record<string, unknown>[]) => ({ object: 'whatsapp_business_account', entry: entries });

it('cuts one large change by its messages and statuses, every part within the size and in the same shape', () => {
  // Prepare
  const messages = Array.from({ length: 40 }, (_, i) => message(i));
  const statuses = Array.from({ length: 200 }, (_, i) => status(i));
  const contacts = messages.map((m) => ({ profile: { name: m.id }, wa_id: m.from }));
  const payload = notification([{ id: 'waba', changes: [{ field: 'messages', value: { messaging_product: 'whatsapp', metadata, contacts, messages, statuses } }] }]);

  // Act
  const { parts, leftOut } = notificationParts(payload, 8_000);

  // Assess
  expect(leftOut).toBe(0);
  expect(parts.length).toBeGreaterThan(2);
  for (const part of parts) expect(Buffer.byteLength(part)).toBeLessThanOrEqual(8_000);
  const values = parts.map((p) => JSON.parse(p)).map((p) => {
    expect(p).toMatchObject({ object: 'whatsapp_business_account', entry: [{ id: 'waba', changes: [{ field: 'messages', value: { messaging_product: 'whatsapp', metadata } }] }] });
    return p.entry[0].changes[0].value;
  });
  expect(values.flatMap((v) => v.messages ?? [])).toEqual(messages);
  expect(values.flatMap((v) => v.statuses ?? [])).toEqual(statuses);
  for (const v of values) {
    expect(v.messages === undefined || v.statuses === undefined).toBe(true);
    if (v.messages) expect(v.contacts).toEqual(v.messages.map((m: { from: string }) => contacts.find((c) => c.wa_id === m.from)));
    else expect(v).not.toHaveProperty('contacts');
  }
});

it('gives each change of a body its own part when the whole is too large, and leaves out an item too large alone', () => {
  // Prepare
  const small = (i: number) => ({ field: 'messages', value: { metadata, statuses: [status(i)] } });
  const huge = { field: 'messages', value: { metadata, messages: [{ ...message(9), text: { body: 'y'.repeat(10_000) } }] } };
  const payload = notification([{ id: 'a', changes: [small(1), small(2)] }, { id: 'b', changes: [huge, small(3)] }]);

  // Act
  const { parts, leftOut } = notificationParts(payload, 1_000);

  // Assess
  expect(leftOut).toBe(1);
  expect(parts.map((p) => JSON.parse(p)).map((p) => [p.entry[0].id, p.entry[0].changes[0].value.statuses[0].id])).toEqual([['a', 'wamid.s1'], ['a', 'wamid.s2'], ['b', 'wamid.s3']]);
});
