/**
 * Tenant isolation over the local stack. Business A owns one of every resource (a conversation with inbound,
 * sent and failed messages, stages, contacts in a stage, static and dynamic segments, a webhook with a delivery,
 * a scheduled broadcast, a presigned upload). Business B then calls EVERY route of the route table — the id
 * routes with A's ids, the others with its own data aimed at A's records — and:
 * - every probe answers the exact status and body it states (id routes: 403 `forbidden` or 404 `not_found`
 *   naming the resource), and leaks none of A's data;
 * - listings, searches, previews, segment counts, member selections by filter and bulk operations show nothing of A;
 * - A's items in the table (every partition of A, the global pointers to it, and their index attributes) are
 *   byte-for-byte the same before and after.
 * The probe map is checked against the route table: a new route without a probe fails this test.
 */
import { routes, routeKey } from '#shared/routes.ts';
import { report, randomPhone, startHardeningStack, startReceiver, type HardeningStack, type Reply, type StackTenant } from '../../support/hardening.ts';

process.env.LIMIT_REQUESTS_PER_MINUTE = '100000';
process.env.LIMIT_MESSAGES_PER_MINUTE = '100000';
process.env.LIMIT_BULK_PER_MINUTE = '100000';

let h: HardeningStack;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let a: StackTenant;
let b: StackTenant;
/** A's resource ids, and the values that must never show up in an answer to B. */
const ids: Record<string, string> = {};
const secrets: string[] = [];
/** A's customer: B may write to the same person (its own conversation), so the number alone is no leak. */
let customer = '';

const ok = (res: Reply, status: number, what: string) => {
  if (res.status !== status) throw new Error(`${what}: expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
};

beforeAll(async () => {
  // A table of its own: A's items are compared by scanning the table, which the rest of the run fills.
  h = await startHardeningStack({ tableName: `isolation-${Date.now()}` });
  receiver = await startReceiver();
  [a, b] = [await h.tenant(), await h.tenant()];
  const tag = `tag-a-${a.businessId.slice(0, 8)}`;
  const name = `Secret Customer ${a.businessId.slice(0, 8)}`;
  customer = randomPhone();
  const lead = randomPhone();

  // A conversation: the customer writes in, A answers, and a send to a blocking number fails.
  ok(await h.sandbox('POST', '/__sandbox/inbound', { from: customer, text: 'hola', phone_number_id: a.phoneNumberId }), 200, 'inbound');
  await h.idle();
  const sent = ok(await a.call('POST', '/messages/v1', { to: customer, content: 'respuesta secreta' }), 200, 'send');
  ids.message = sent.data.id;
  ids.conversation = sent.data.conversationId;
  const failed = await a.call('POST', '/messages/v1', { to: '+5215555131026', type: 'template', templateName: 'hello_world', language: 'en_US' });
  ids.failedMessage = failed.body.data.id;
  expect(failed.body.data.status).toBe('failed');

  ids.stage = ok(await a.call('POST', '/funnel/v1/stages', { name: 'A stage' }), 201, 'stage').stage.id;
  ids.stage2 = ok(await a.call('POST', '/funnel/v1/stages', { name: 'A stage 2' }), 201, 'stage 2').stage.id;
  ids.contact = ok(await a.call('POST', '/contacts/v1', { phone_number: lead, name, tags: [tag] }), 201, 'contact').contact.id;
  ok(await a.call('POST', `/funnel/v1/contacts/${ids.contact}/move`, { stage_id: ids.stage }), 200, 'move');
  ids.inboundContact = ok(await a.call('GET', '/contacts/v1', undefined), 200, 'contacts').contacts.find((c: any) => c.phone_number === customer).id;

  ids.segment = ok(await a.call('POST', '/segments', { name: 'A static', type: 'static' }), 201, 'segment').data.id;
  ok(await a.call('POST', `/segments/${ids.segment}/members`, { action: 'add', contactIds: [ids.contact] }), 200, 'members');
  ids.dynamicSegment = ok(await a.call('POST', '/segments', { name: 'A dynamic', type: 'dynamic', rules: { version: 3, filters: { tags: { any: [tag] } } } }), 201, 'dynamic').data.id;

  const webhook = ok(await a.call('POST', '/user-webhooks', { name: 'A hook', url: `${receiver.url}?tenant=a`, events: ['*'] }), 201, 'webhook').data;
  ids.webhook = webhook.id;
  ids.delivery = ok(await a.call('POST', `/user-webhooks/${ids.webhook}/test`, {}), 200, 'webhook test').data.deliveryId;

  const sendAt = new Date(Date.now() + 86_400_000).toISOString();
  ids.broadcast = ok(await a.call('POST', '/broadcasts/v1', { name: 'A broadcast', templateName: 'hello_world', language: 'en_US', contact_ids: [ids.contact], send_at: sendAt }), 201, 'broadcast').data.id;
  ids.upload = ok(await a.call('POST', '/media/v1/uploads', { type: 'image', file_size: 1000, mime_type: 'image/jpeg' }), 201, 'upload').upload_id;

  ok(await a.call('PATCH', `/conversations/v1/${ids.conversation}/ai`, { aiEnabled: true }), 200, 'ai');
  await h.idle();
  secrets.push(name, tag, lead, webhook.secret, webhook.url, 'respuesta secreta', ...Object.values(ids));
}, 60_000);

afterAll(async () => {
  await h?.stop();
  await receiver?.stop();
});

/** What a probe must answer: the exact status, and a body its answer must equal (matchers allowed). */
interface Want { status: number; body: unknown }
type Probe =
  /** The route takes an id: B is refused with A's ids. */
  | { kind: 'foreign'; path: () => string; body?: () => unknown; want: () => Want }
  /** The route acts on B's own data (lists, creates, business settings): it answers, and shows nothing of A's. */
  | { kind: 'own'; path: () => string; body?: () => unknown; want: () => Want }
  /** Not a business's data (public reference, upstream webhook verification). */
  | { kind: 'public'; path: () => string; want: () => Want };

const forbidden = (what: string): Want => ({ status: 403, body: { error: 'forbidden', message: `This ${what} belongs to another account` } });
const foreignHook: Want = { status: 403, body: { error: 'forbidden', message: 'The webhook subscription belongs to another account' } };
const notFound = (message: string): Want => ({ status: 404, body: { error: 'not_found', message } });
const segmentNotFound = notFound('Segment not found');
const ok200 = (body: unknown): Want => ({ status: 200, body: expect.objectContaining(body as object) });
/** A bulk answer in which every item failed as not found (A's contacts are not B's). */
const bulkNoneFound = (operation: string, n: number): Want => ({
  status: 207,
  body: expect.objectContaining({ operation, success_count: 0, error_count: n, results: Array.from({ length: n }, () => expect.objectContaining({ success: false, error: 'not_found' })) }),
});
const noneAdded: Want = ok200({ data: expect.objectContaining({ action: 'add', affected: 0, contactIds: [], contactCount: 0 }) });

/** Meta's answer for an object the caller may not see (the Cloud-API-compatible routes): 404, Graph code 100. */
const graphNotFound: Want = { status: 400, body: { error: expect.objectContaining({ code: 100, error_subcode: 33, type: 'GraphMethodException' }) } };

const probes: Record<string, Probe[]> = {
  // The Cloud-API-compatible routes with A's phone number id (as the number, the media id and the WABA id).
  'POST /{version}/{id}/messages': [{ kind: 'foreign', path: () => `/v23.0/${a.phoneNumberId}/messages`, body: () => ({ messaging_product: 'whatsapp', to: customer, type: 'text', text: { body: 'hola' } }), want: () => graphNotFound }],
  // A JSON body is refused before the number is looked at (the upload must be multipart): nothing of A's is reached.
  'POST /{version}/{id}/media': [{ kind: 'foreign', path: () => `/v23.0/${a.phoneNumberId}/media`, body: () => ({ messaging_product: 'whatsapp' }), want: () => ({ status: 400, body: { error: expect.objectContaining({ code: 100, type: 'OAuthException', message: '(#100) Media upload requires multipart/form-data' }) } }) }],
  'GET /{version}/{id}': [{ kind: 'foreign', path: () => `/v23.0/${a.phoneNumberId}`, want: () => graphNotFound }],
  'DELETE /{version}/{id}': [{ kind: 'foreign', path: () => `/v23.0/${a.phoneNumberId}`, want: () => graphNotFound }],
  'GET /{version}/{id}/message_templates': [{ kind: 'foreign', path: () => `/v23.0/${a.phoneNumberId}/message_templates`, want: () => graphNotFound }],
  // The same without a version (Graph's default version).
  'POST /{id}/messages': [{ kind: 'foreign', path: () => `/${a.phoneNumberId}/messages`, body: () => ({ messaging_product: 'whatsapp', to: customer, type: 'text', text: { body: 'hola' } }), want: () => graphNotFound }],
  'POST /{id}/media': [{ kind: 'foreign', path: () => `/${a.phoneNumberId}/media`, body: () => ({ messaging_product: 'whatsapp' }), want: () => ({ status: 400, body: { error: expect.objectContaining({ code: 100, type: 'OAuthException', message: '(#100) Media upload requires multipart/form-data' }) } }) }],
  'GET /{id}/message_templates': [{ kind: 'foreign', path: () => `/${a.phoneNumberId}/message_templates`, want: () => graphNotFound }],
  'GET /openapi.json': [{ kind: 'public', path: () => '/openapi.json', want: () => ok200({ openapi: '3.1.0' }) }],
  'GET /docs': [{ kind: 'public', path: () => '/docs', want: () => ({ status: 200, body: expect.stringContaining('<!doctype html>') }) }],
  // A link is a pre-signed URL of the media bucket; anything else is no file.
  'GET /media/v1/files/{token}': [{ kind: 'public', path: () => `/media/v1/files/${Buffer.from('http://169.254.169.254/latest?X-Amz-Signature=1&X-Amz-Expires=1').toString('base64url')}`, want: () => ({ status: 404, body: { error: 'not_found', message: 'No media file at this link' } }) }],
  'GET /docs/scalar.js': [{ kind: 'public', path: () => '/docs/scalar.js', want: () => ({ status: 200, body: expect.any(String) }) }],
  'GET /webhooks/upstream': [{ kind: 'public', path: () => '/webhooks/upstream?hub.mode=subscribe&hub.verify_token=x&hub.challenge=1', want: () => ({ status: 403, body: { error: 'forbidden', message: 'Webhook verification failed: wrong hub.mode or hub.verify_token' } }) }],
  // The upstream webhook routes by phone number id: checked below with an inbound from A's customer to B.
  'POST /webhooks/upstream': [],
  'GET /team/v1': [{ kind: 'own', path: () => '/team/v1', want: () => ({ status: 200, body: { agents: [] } }) }],
  // B writing to A's customer: B's own window is closed, and nothing of A's conversation is touched.
  'POST /messages/v1': [{ kind: 'own', path: () => '/messages/v1', body: () => ({ to: customer, content: 'hola' }), want: () => ({ status: 400, body: expect.objectContaining({ error: 'message_delivery_failed' }) }) }],
  'POST /messages/v1/{id}/retry': [{ kind: 'foreign', path: () => `/messages/v1/${ids.failedMessage}/retry`, want: () => forbidden('message') }],
  'GET /messages/v1/{id}': [{ kind: 'foreign', path: () => `/messages/v1/${ids.message}`, want: () => forbidden('message') }],
  // B's only conversation is its own, with A's customer (opened by B's send above).
  'GET /conversations/v1': [{ kind: 'own', path: () => '/conversations/v1', want: () => ok200({ conversations: [expect.objectContaining({ id: expect.not.stringMatching(ids.conversation!), phoneNumber: customer })] }) }],
  'GET /conversations/v1/{id}': [{ kind: 'foreign', path: () => `/conversations/v1/${ids.conversation}`, want: () => forbidden('conversation') }],
  'GET /conversations/v1/{id}/messages': [{ kind: 'foreign', path: () => `/conversations/v1/${ids.conversation}/messages`, want: () => forbidden('conversation') }],
  'PATCH /conversations/v1/{id}/ai': [{ kind: 'foreign', path: () => `/conversations/v1/${ids.conversation}/ai`, body: () => ({ aiEnabled: false }), want: () => forbidden('conversation') }],
  'POST /conversations/v1/{id}/ai/pause': [{ kind: 'foreign', path: () => `/conversations/v1/${ids.conversation}/ai/pause`, body: () => ({ duration: 60 }), want: () => forbidden('conversation') }],
  'POST /conversations/v1/{id}/close': [{ kind: 'foreign', path: () => `/conversations/v1/${ids.conversation}/close`, want: () => forbidden('conversation') }],
  'POST /agent/v1/pause': [{ kind: 'own', path: () => '/agent/v1/pause', body: () => ({ duration: 60 }), want: () => ok200({ success: true, pausedUntil: expect.any(String) }) }],
  'POST /agent/pause': [{ kind: 'own', path: () => '/agent/pause', body: () => ({ duration: 60 }), want: () => ok200({ success: true, pausedUntil: expect.any(String) }) }],
  'POST /agent/v1/toggle': [{ kind: 'own', path: () => '/agent/v1/toggle', body: () => ({ enabled: false }), want: () => ({ status: 200, body: { success: true, enabled: false } }) }],
  'POST /agent/toggle': [{ kind: 'own', path: () => '/agent/toggle', body: () => ({ enabled: false }), want: () => ({ status: 200, body: { success: true, enabled: false } }) }],
  'GET /agent/v1/status': [{ kind: 'own', path: () => '/agent/v1/status', want: () => ok200({ enabled: false, pausedUntil: expect.any(String) }) }],
  // B's settings are B's: the default prompt, not A's.
  'GET /agent/v1/settings': [{ kind: 'own', path: () => '/agent/v1/settings', want: () => ok200({ settings: expect.objectContaining({ enabled: false }) }) }],
  'PATCH /agent/v1/settings': [{ kind: 'own', path: () => '/agent/v1/settings', body: () => ({ enabled: false }), want: () => ok200({ settings: expect.objectContaining({ enabled: false }) }) }],
  'POST /media/v1': [{ kind: 'own', path: () => '/media/v1', body: () => ({ type: 'image' }), want: () => ({ status: 400, body: expect.objectContaining({ error: 'validation_error', message: 'Media upload requires multipart/form-data' }) }) }],
  'POST /media/v1/uploads': [{ kind: 'own', path: () => '/media/v1/uploads', body: () => ({ type: 'image', file_size: 10, mime_type: 'image/jpeg' }), want: () => ({ status: 201, body: expect.objectContaining({ upload_id: expect.any(String), upload_url: expect.any(String) }) }) }],
  'POST /media/v1/uploads/{id}/complete': [{ kind: 'foreign', path: () => `/media/v1/uploads/${ids.upload}/complete`, want: () => notFound(`Upload ${ids.upload} not found`) }],
  'GET /funnel/v1/stages': [{ kind: 'own', path: () => '/funnel/v1/stages', want: () => ({ status: 200, body: { stages: [] } }) }],
  'POST /funnel/v1/stages': [{ kind: 'own', path: () => '/funnel/v1/stages', body: () => ({ name: 'B stage', position: 0 }), want: () => ({ status: 201, body: { stage: expect.objectContaining({ name: 'B stage', position: 0, contact_count: 0 }) } }) }],
  'PATCH /funnel/v1/stages/reorder': [{ kind: 'foreign', path: () => '/funnel/v1/stages/reorder', body: () => ({ stage_ids: [ids.stage2, ids.stage] }), want: () => forbidden('funnel stage') }],
  'GET /funnel/v1/stages/{id}': [{ kind: 'foreign', path: () => `/funnel/v1/stages/${ids.stage}`, want: () => forbidden('funnel stage') }],
  'PATCH /funnel/v1/stages/{id}': [{ kind: 'foreign', path: () => `/funnel/v1/stages/${ids.stage}`, body: () => ({ name: 'hijacked' }), want: () => forbidden('funnel stage') }],
  'DELETE /funnel/v1/stages/{id}': [{ kind: 'foreign', path: () => `/funnel/v1/stages/${ids.stage2}`, want: () => forbidden('funnel stage') }],
  'POST /funnel/v1/contacts/{id}/move': [
    { kind: 'foreign', path: () => `/funnel/v1/contacts/${ids.contact}/move`, body: () => ({ stage_id: null }), want: () => forbidden('contact') },
    // B's own contact into A's stage: refused as A's stage.
    { kind: 'foreign', path: () => `/funnel/v1/contacts/${ids.bContact}/move`, body: () => ({ stage_id: ids.stage }), want: () => forbidden('funnel stage') },
  ],
  // Phones are unique per business, not globally: B may hold A's lead too, as its own record.
  'POST /contacts/v1': [
    { kind: 'own', path: () => '/contacts/v1', body: () => ({ phone_number: secrets[2], name: 'B lead' }), want: () => ({ status: 201, body: { contact: expect.objectContaining({ phone_number: secrets[2], name: 'B lead', tags: [], custom_fields: {} }) } }) },
    // A contact of B's into A's stage: refused as A's stage, as a move is.
    { kind: 'foreign', path: () => '/contacts/v1', body: () => ({ phone_number: '+5215500000777', funnel_stage_id: ids.stage }), want: () => forbidden('funnel stage') },
  ],
  'GET /contacts/v1': [
    { kind: 'own', path: () => `/contacts/v1?search=${encodeURIComponent(secrets[0]!)}`, want: () => ({ status: 200, body: { contacts: [], next_cursor: null } }) },
    { kind: 'own', path: () => `/contacts/v1?filters=${encodeURIComponent(JSON.stringify({ tags: { any: [secrets[1]] } }))}`, want: () => ({ status: 200, body: { contacts: [], next_cursor: null } }) },
    { kind: 'own', path: () => `/contacts/v1?filters=${encodeURIComponent(JSON.stringify({ funnel_stage_id: ids.stage }))}`, want: () => ({ status: 200, body: { contacts: [], next_cursor: null } }) },
  ],
  'POST /contacts/v1/bulk': [
    { kind: 'own', path: () => '/contacts/v1/bulk', body: () => ({ operation: 'delete', contact_ids: [ids.contact, ids.inboundContact] }), want: () => bulkNoneFound('delete', 2) },
    { kind: 'own', path: () => '/contacts/v1/bulk', body: () => ({ operation: 'add_tags', contact_ids: [ids.contact], tags: ['pwned'] }), want: () => bulkNoneFound('add_tags', 1) },
    { kind: 'own', path: () => '/contacts/v1/bulk', body: () => ({ operation: 'update', contacts: [{ id: ids.contact, add_tags: ['pwned'] }] }), want: () => bulkNoneFound('update', 1) },
    { kind: 'own', path: () => '/contacts/v1/bulk', body: () => ({ operation: 'set_funnel_stage', contact_ids: [ids.bContact], funnel_stage_id: ids.stage }), want: () => forbidden('funnel stage') },
    // A contact of B's created or updated into A's stage: that item fails, saying whose stage it is (the contact is B's own).
    { kind: 'own', path: () => '/contacts/v1/bulk', body: () => ({ operation: 'create', contacts: [{ phone_number: '+5215500000778', funnel_stage_id: ids.stage }] }), want: () => ({ status: 207, body: expect.objectContaining({ error_count: 1, results: [{ success: false, contact_id: null, phone_number: '+5215500000778', error: 'create_failed', message: 'This funnel stage belongs to another account' }] }) }) },
    { kind: 'own', path: () => '/contacts/v1/bulk', body: () => ({ operation: 'update', contacts: [{ id: ids.bContact, funnel_stage_id: ids.stage }] }), want: () => ({ status: 207, body: expect.objectContaining({ error_count: 1, results: [{ success: false, contact_id: ids.bContact, error: 'update_failed', message: 'This funnel stage belongs to another account' }] }) }) },
  ],
  'GET /contacts/v1/{id}': [{ kind: 'foreign', path: () => `/contacts/v1/${ids.contact}`, want: () => forbidden('contact') }],
  'PATCH /contacts/v1/{id}': [
    { kind: 'foreign', path: () => `/contacts/v1/${ids.contact}`, body: () => ({ name: 'hijacked' }), want: () => forbidden('contact') },
    { kind: 'foreign', path: () => `/contacts/v1/${ids.bContact}`, body: () => ({ funnel_stage_id: ids.stage }), want: () => forbidden('funnel stage') },
  ],
  'DELETE /contacts/v1/{id}': [{ kind: 'foreign', path: () => `/contacts/v1/${ids.contact}`, want: () => forbidden('contact') }],
  // B's segments only: its static one (the dynamic one of the probe below comes after this listing).
  'GET /segments': [{ kind: 'own', path: () => '/segments', want: () => ok200({ data: [expect.objectContaining({ id: ids.bSegment, name: 'B static' })] }) }],
  'POST /segments': [{ kind: 'own', path: () => '/segments', body: () => ({ name: 'B dyn', type: 'dynamic', rules: { version: 3, filters: { tags: { any: [secrets[1]] } } } }), want: () => ({ status: 201, body: { data: expect.objectContaining({ name: 'B dyn', type: 'dynamic', contactCount: 0 }) } }) }],
  'POST /segments/preview': [
    { kind: 'own', path: () => '/segments/preview', body: () => ({ rules: { version: 3, filters: { tags: { any: [secrets[1]] } } } }), want: () => ({ status: 200, body: { data: { count: 0, preview: [], rulesFormat: 'filters' } } }) },
    { kind: 'own', path: () => '/segments/preview', body: () => ({ rules: { version: 3, filters: { funnel_stage_id: ids.stage } } }), want: () => ({ status: 200, body: { data: { count: 0, preview: [], rulesFormat: 'filters' } } }) },
  ],
  'GET /segments/{id}': [{ kind: 'foreign', path: () => `/segments/${ids.segment}`, want: () => segmentNotFound }],
  'PATCH /segments/{id}': [{ kind: 'foreign', path: () => `/segments/${ids.dynamicSegment}`, body: () => ({ name: 'hijacked' }), want: () => segmentNotFound }],
  'DELETE /segments/{id}': [{ kind: 'foreign', path: () => `/segments/${ids.segment}`, want: () => segmentNotFound }],
  'POST /segments/{id}/contacts': [{ kind: 'foreign', path: () => `/segments/${ids.segment}/contacts`, body: () => ({ contactIds: [ids.inboundContact] }), want: () => segmentNotFound }],
  'DELETE /segments/{id}/contacts/{contactId}': [{ kind: 'foreign', path: () => `/segments/${ids.segment}/contacts/${ids.contact}`, want: () => segmentNotFound }],
  'POST /segments/{id}/evaluate': [{ kind: 'foreign', path: () => `/segments/${ids.dynamicSegment}/evaluate`, want: () => segmentNotFound }],
  'GET /segments/{id}/usage': [{ kind: 'foreign', path: () => `/segments/${ids.segment}/usage`, want: () => segmentNotFound }],
  'POST /segments/{id}/members': [
    { kind: 'foreign', path: () => `/segments/${ids.segment}/members`, body: () => ({ action: 'remove', contactIds: [ids.contact] }), want: () => segmentNotFound },
    // B's own static segment, selecting A's contacts by id, by A's tag, by A's stage, by A's segment and by A's name.
    { kind: 'own', path: () => `/segments/${ids.bSegment}/members`, body: () => ({ action: 'add', contactIds: [ids.contact] }), want: () => ({ status: 400, body: expect.objectContaining({ error: `1 contact id(s) do not exist in this business: ${ids.contact}. Nothing was applied; remove them and retry.` }) }) },
    { kind: 'own', path: () => `/segments/${ids.bSegment}/members`, body: () => ({ action: 'add', filters: { tags: { any: [secrets[1]] } } }), want: () => noneAdded },
    { kind: 'own', path: () => `/segments/${ids.bSegment}/members`, body: () => ({ action: 'add', filters: { funnel_stage_id: ids.stage } }), want: () => noneAdded },
    { kind: 'own', path: () => `/segments/${ids.bSegment}/members`, body: () => ({ action: 'add', filters: { segment_id: ids.segment } }), want: () => ({ status: 400, body: expect.objectContaining({ error: expect.stringContaining(`filters.segment_id: segment ${ids.segment} does not exist in this business`) }) }) },
    { kind: 'own', path: () => `/segments/${ids.bSegment}/members`, body: () => ({ action: 'add', search: secrets[0] }), want: () => noneAdded },
  ],
  'POST /user-webhooks': [{ kind: 'own', path: () => '/user-webhooks', body: () => ({ name: 'B hook', url: `${receiver.url}?tenant=b`, events: ['*'] }), want: () => ({ status: 201, body: { data: expect.objectContaining({ name: 'B hook', url: `${receiver.url}?tenant=b`, events: ['*'], secret: expect.any(String) }) } }) }],
  'GET /user-webhooks': [{ kind: 'own', path: () => '/user-webhooks', want: () => ok200({ data: [expect.objectContaining({ name: 'B hook', url: `${receiver.url}?tenant=b` })] }) }],
  'GET /user-webhooks/{id}': [{ kind: 'foreign', path: () => `/user-webhooks/${ids.webhook}`, want: () => foreignHook }],
  'PATCH /user-webhooks/{id}': [{ kind: 'foreign', path: () => `/user-webhooks/${ids.webhook}`, body: () => ({ url: 'http://127.0.0.1:9/steal' }), want: () => foreignHook }],
  'DELETE /user-webhooks/{id}': [{ kind: 'foreign', path: () => `/user-webhooks/${ids.webhook}`, want: () => foreignHook }],
  'POST /user-webhooks/{id}/regenerate-secret': [{ kind: 'foreign', path: () => `/user-webhooks/${ids.webhook}/regenerate-secret`, want: () => foreignHook }],
  'POST /user-webhooks/{id}/test': [{ kind: 'foreign', path: () => `/user-webhooks/${ids.webhook}/test`, want: () => foreignHook }],
  'GET /user-webhooks/{id}/deliveries': [{ kind: 'foreign', path: () => `/user-webhooks/${ids.webhook}/deliveries`, want: () => foreignHook }],
  'POST /user-webhooks/{id}/deliveries/{deliveryId}/redeliver': [{ kind: 'foreign', path: () => `/user-webhooks/${ids.webhook}/deliveries/${ids.delivery}/redeliver`, want: () => foreignHook }],
  'POST /broadcasts/v1': [
    { kind: 'own', path: () => '/broadcasts/v1', body: () => ({ name: 'B', templateName: 'hello_world', language: 'en_US', segment_id: ids.segment }), want: () => ({ status: 400, body: { error: 'validation_error', message: 'The segment does not exist in this business', details: { segment_id: ['segment not found'] } } }) },
    // A's contact id names nobody in B: the broadcast has no recipient to send to.
    { kind: 'own', path: () => '/broadcasts/v1', body: () => ({ name: 'B', templateName: 'hello_world', language: 'en_US', contact_ids: [ids.contact] }), want: () => ({ status: 201, body: { data: expect.objectContaining({ name: 'B', counts: expect.objectContaining({ sent: 0 }) }) } }) },
  ],
  'GET /broadcasts/v1': [{ kind: 'own', path: () => '/broadcasts/v1', want: () => ok200({ data: [expect.objectContaining({ name: 'B' })] }) }],
  'GET /broadcasts/v1/{id}': [{ kind: 'foreign', path: () => `/broadcasts/v1/${ids.broadcast}`, want: () => forbidden('broadcast') }],
  'GET /broadcasts/v1/{id}/recipients': [{ kind: 'foreign', path: () => `/broadcasts/v1/${ids.broadcast}/recipients`, want: () => forbidden('broadcast') }],
  'POST /broadcasts/v1/{id}/cancel': [{ kind: 'foreign', path: () => `/broadcasts/v1/${ids.broadcast}/cancel`, want: () => forbidden('broadcast') }],
};

const methodOf = (key: string) => key.split(' ')[0]!;
const leaks = (res: Reply) => secrets.filter((s) => typeof res.body === 'object' ? JSON.stringify(res.body).includes(s) : String(res.body ?? '').includes(s));

it('has a probe for every route of the route table', () => {
  const missing = routes.map((r) => routeKey(r.method, r.path)).filter((k) => !(k in probes));
  const stale = Object.keys(probes).filter((k) => !routes.some((r) => routeKey(r.method, r.path) === k));
  expect({ missing, stale }).toEqual({ missing: [], stale: [] });
});

it('gives business B no access to A: every route 403/404 on A\'s ids, nothing of A in B\'s answers, A\'s items unchanged', async () => {
  // Prepare: B's own contact and static segment (targets of the cross-tenant selections), then A's whole table.
  ids.bContact = ok(await b.call('POST', '/contacts/v1', { phone_number: randomPhone(), name: 'B own' }), 201, 'B contact').contact.id;
  ids.bSegment = ok(await b.call('POST', '/segments', { name: 'B static', type: 'static' }), 201, 'B segment').data.id;
  await h.idle();
  const before = await h.businessItems(a.businessId);
  expect(before.length).toBeGreaterThan(20);

  // Act: every probe of every route, with B's key.
  const failures: string[] = [];
  let checks = 0;
  for (const [key, list] of Object.entries(probes)) {
    for (const probe of list) {
      checks++;
      const path = probe.path();
      const body = 'body' in probe && probe.body ? probe.body() : methodOf(key) === 'GET' || methodOf(key) === 'DELETE' ? undefined : {};
      const res = await b.call(methodOf(key), path, body);
      if (process.env.HARDENING_DEBUG) console.log(key, path.slice(0, 60), res.status, JSON.stringify(res.body).slice(0, 160));
      const leaked = leaks(res).filter((s) => !path.includes(s) && !JSON.stringify(body ?? '').includes(s));
      if (leaked.length > 0) failures.push(`${key} ${path}: answer shows A's ${leaked.join(', ')}`);
      // Every probe states the exact status and body it expects.
      try {
        expect({ status: res.status, body: res.body }).toEqual(probe.want());
      } catch {
        failures.push(`${key} ${path}: expected ${JSON.stringify(probe.want()).slice(0, 200)}, got ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
      }
    }
  }
  // The upstream webhook: A's customer writing to B's number reaches B only.
  ok(await h.sandbox('POST', '/__sandbox/inbound', { from: customer, text: 'hola B', phone_number_id: b.phoneNumberId }), 200, 'inbound B');
  checks++;
  await h.idle();

  // Assess: nothing failed, and A's items are exactly what they were.
  const after = await h.businessItems(a.businessId);
  report(`isolation: ${checks} cross-tenant probes over ${Object.keys(probes).length} routes, ${before.length} items of business A compared before/after, ${failures.length} failures`);
  expect(failures).toEqual([]);
  expect(after).toEqual(before);
  const bConversations = ok(await b.call('GET', '/conversations/v1'), 200, 'B conversations').conversations;
  expect(bConversations).toHaveLength(1);
  expect(bConversations[0].id).not.toBe(ids.conversation);
  // A's counts ignore B's contact with the same phone and tag.
  const bLead = ok(await b.call('GET', '/contacts/v1'), 200, 'B contacts').contacts.find((c: any) => c.phone_number === secrets[2]);
  ok(await b.call('PATCH', `/contacts/v1/${bLead.id}`, { tags: [secrets[1]] }), 200, 'B tags its lead');
  expect(ok(await a.call('GET', `/segments/${ids.dynamicSegment}`), 200, 'A segment').data.contactCount).toBe(1);
  expect(ok(await a.call('POST', '/segments/preview', { rules: { version: 3, filters: { tags: { any: [secrets[1]] } } } }), 200, 'A preview').data.count).toBe(1);
  expect(ok(await a.call('GET', `/contacts/v1?search=${encodeURIComponent(secrets[2]!)}`), 200, 'A search').contacts.map((c: any) => c.id)).toEqual([ids.contact]);
  // B's broadcast naming A's contact ended without sending anything to A's lead.
  expect((await h.sandbox('GET', `/__sandbox/sent?to=${encodeURIComponent(secrets[2]!)}`)).body).toEqual([]);
}, 60_000);

it('delivers A\'s events only to A\'s webhooks', async () => {
  // Prepare: the receiver's log so far; B has a subscription to every event (created by its probe).
  const start = receiver.received.length;

  // Act: A sends a message (message.sent and conversation events are fanned out).
  ok(await a.call('POST', '/messages/v1', { to: customer, content: 'solo para A' }), 200, 'A send');
  await h.idle();

  // Assess: A's URL got them; B's subscription (same receiver, `?b=1`) got nothing of A's.
  const fresh = receiver.received.slice(start);
  expect(fresh.filter((r) => r.url === '/hook?tenant=a' && r.body.includes(ids.conversation)).length).toBeGreaterThan(0);
  const toB = fresh.filter((r) => r.url === '/hook?tenant=b');
  expect(toB.filter((r) => secrets.some((s) => r.body.includes(s)) || r.body.includes('solo para A'))).toEqual([]);
});
