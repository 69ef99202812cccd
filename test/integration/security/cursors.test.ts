/**
 * Every cursor-paginated list reads its cursor through one strict codec: a cursor of the caller's own list
 * pages, and a forged one — garbled, an extra or missing attribute, a value of the wrong type, another
 * business's or another list's partition — is 400 `invalid_cursor`, never a DynamoDB ValidationException (500)
 * and never a page of someone else's items.
 */
import { invoke, newTenant, type TestTenant } from '../../support/api.ts';
import { keys } from '#shared/store/keys.ts';
import { findOrCreateConversation } from '#shared/conversations/repository.ts';
import { putRecipients } from '#shared/broadcasts/recipients.ts';

const cursorOf = (key: unknown) => Buffer.from(JSON.stringify(key)).toString('base64url');

interface ListUnderTest {
  route: string;
  params?: Record<string, string>;
  /** A key of the caller's own list, as its cursor would hold it. */
  own: Record<string, string>;
  /** The same list's key in another business. */
  foreign: Record<string, string>;
}

let t: TestTenant;
let other: TestTenant;
const lists: ListUnderTest[] = [];

beforeAll(async () => {
  [t, other] = await Promise.all([newTenant(), newTenant()]);
  const contact = (await invoke('POST /contacts/v1', { apiKey: t.apiKey, body: { phone_number: '+5215512340077', name: 'Cursor' } })).body.contact;
  const { conversation } = await findOrCreateConversation(t.businessId, contact);
  const broadcast = (await invoke('POST /broadcasts/v1', { apiKey: t.apiKey, body: { name: 'C', templateName: 'hello_world', language: 'en_US', contact_ids: [contact.id] } })).body.data;
  await putRecipients(t.businessId, broadcast.id, [{ contact_id: contact.id, seq: 0, state: 'pending', phone_number: contact.phone_number }]);
  const webhook = (await invoke('POST /user-webhooks', { apiKey: t.apiKey, body: { name: 'c', url: 'https://example.com/hook', events: ['*'] } })).body.data;
  const id = '00000000-0000-4000-8000-000000000001';
  const both = (make: (bid: string) => Record<string, string>) => ({ own: make(t.businessId), foreign: make(other.businessId) });
  lists.push(
    { route: 'GET /contacts/v1', ...both((bid) => keys.contact(bid, id)) },
    { route: 'GET /conversations/v1', ...both((bid) => ({ ...keys.conversation(bid, id), ...keys.conversationByRecency(bid, '2026-01-01T00:00:00.000Z', id) })) },
    {
      route: 'GET /conversations/v1/{id}/messages', params: { id: conversation.id },
      ...both((bid) => ({ ...keys.message(bid, id), ...keys.messageInConversation(bid, conversation.id, '2026-01-01T00:00:00.000Z', id) })),
    },
    { route: 'GET /broadcasts/v1', ...both((bid) => ({ ...keys.broadcast(bid, id), ...keys.broadcastByRecency(bid, '2026-01-01T00:00:00.000Z', id) })) },
    { route: 'GET /broadcasts/v1/{id}/recipients', params: { id: broadcast.id }, ...both((bid) => keys.broadcastRecipient(bid, broadcast.id, id)) },
    { route: 'GET /user-webhooks/{id}/deliveries', params: { id: webhook.id }, ...both((bid) => keys.delivery(bid, webhook.id, id)) },
  );
}, 120_000);

const forgeries = (l: ListUnderTest): [string, string][] => {
  const [first, second] = Object.keys(l.own);
  return [
    ['garbled', 'not-a-cursor'],
    ['not an object', cursorOf(['pk', l.own.pk])],
    ['an extra attribute', cursorOf({ ...l.own, extra: 'x' })],
    ['a missing attribute', cursorOf(Object.fromEntries(Object.entries(l.own).slice(1)))],
    ['a number where a string belongs', cursorOf({ ...l.own, [second]: 7 })],
    ['a DynamoDB-typed value', cursorOf({ ...l.own, [second]: { S: l.own[second] } })],
    ['an empty sort key', cursorOf({ ...l.own, [second]: '' })],
    ['another business', cursorOf(l.foreign)],
    ['another list of the same business', cursorOf({ ...l.own, [first]: `${l.own[first]}#OTHER` })],
    ['a prototype key', Buffer.from(`{${Object.entries(l.own).map(([k, v]) => `"${k}":"${v}"`).join(',')},"__proto__":{"x":1}}`).toString('base64url')],
  ];
};

describe('cursors of every list', () => {
  it.each([
    'GET /contacts/v1', 'GET /conversations/v1', 'GET /conversations/v1/{id}/messages', 'GET /broadcasts/v1', 'GET /broadcasts/v1/{id}/recipients',
    'GET /user-webhooks/{id}/deliveries',
  ])('%s pages with a cursor of the caller\'s own list and refuses every forgery with 400 invalid_cursor', async (route) => {
    const l = lists.find((x) => x.route === route)!;
    // Act / Assess: a well-formed cursor of the caller's list is accepted...
    const ok = await invoke(l.route, { apiKey: t.apiKey, params: l.params, query: { cursor: cursorOf(l.own) } });
    expect(ok.status).toBe(200);
    // ...and each forgery is the client's error, in the contract's shape.
    const answers = await Promise.all(forgeries(l).map(async ([what, cursor]) => {
      const res = await invoke(l.route, { apiKey: t.apiKey, params: l.params, query: { cursor } });
      return [what, res.status, res.body.error, typeof res.body.message];
    }));
    expect(answers).toEqual(forgeries(l).map(([what]) => [what, 400, 'invalid_cursor', 'string']));
  }, 120_000);
});
