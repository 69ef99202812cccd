/**
 * GET /openapi.json is a valid OpenAPI 3.1 document (checked by a real validator) that covers every route,
 * scope and event, and it cannot drift from the code: a walk through every area of the local stack records
 * each real response, and each one's status must be documented for its operation and its JSON body must
 * match the documented schema.
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { routes } from '#shared/routes.ts';
import { EVENT_NAMES } from '#shared/events/names.ts';
import { startTestStack, type LocalStack } from '../../support/stack.ts';
import { WaCrmClient } from '#shared/client/index.ts';

const addFormats = (addFormatsModule as any).default ?? addFormatsModule;

interface Seen { method: string; path: string; url: string; status: number; contentType: string; body: unknown }

let stack: LocalStack;
let doc: any;
let apiKey: string;
let phoneNumberId: string;
const seen: Seen[] = [];

/** fetch that records every answer of the service, for the drift check. */
const recordingFetch: typeof fetch = async (input, init) => {
  const res = await fetch(input, init);
  const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
  const text = await res.clone().text();
  let body: unknown = text;
  try { body = JSON.parse(text); } catch { /* not JSON */ }
  seen.push({ method: (init?.method ?? 'GET').toUpperCase(), path: url.pathname, url: url.toString(), status: res.status, contentType: res.headers.get('content-type') ?? '', body });
  return res;
};

const raw = (method: string, path: string, body?: unknown, key: string | null = apiKey) =>
  recordingFetch(`${stack.url}${path}`, {
    method,
    headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });

const phone = () => `+5215${String(Math.floor(Math.random() * 1e8)).padStart(8, '0')}`;

beforeAll(async () => {
  stack = await startTestStack({ queueRetryDelayMs: 50 });
  const { newTenant } = await import('../../support/api.ts');
  const business = await newTenant(undefined, 'OpenAPI test');
  phoneNumberId = business.phoneNumberId;
  apiKey = business.apiKey;
  doc = await (await fetch(`${stack.url}/openapi.json`)).json();
}, 60_000);
afterAll(() => stack?.stop());

describe('OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    // Act
    const result = await new Validator().validate(doc);
    // Assess
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.servers[0].url).toBe(stack.url);
  });

  it('documents every route with its scope, its parameters and the errors of the contract', () => {
    for (const route of routes) {
      const op = doc.paths[route.path]?.[route.method.toLowerCase()];
      expect({ route: `${route.method} ${route.path}`, found: Boolean(op) }).toEqual({ route: `${route.method} ${route.path}`, found: true });
      expect(op.security).toEqual(route.scope ? [{ apiKey: [route.scope] }] : []);
      for (const name of route.path.match(/\{(\w+)\}/g) ?? []) {
        expect(op.parameters).toContainEqual(expect.objectContaining({ name: name.slice(1, -1), in: 'path', required: true }));
      }
      const codes = Object.keys(op.responses);
      expect(codes).toEqual(expect.arrayContaining(['400', '404', '500']));
      if (route.scope) expect(codes).toEqual(expect.arrayContaining(['401', '403', '429']));
    }
    const send = doc.paths['/messages/v1'].post;
    expect(Object.keys(send.responses)).toEqual(expect.arrayContaining(['200', '202', '400', '413']));
    expect(send.responses['413'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/MediaTooLarge' });
    expect(send.responses['429'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/RateLimited' });
    expect(send.responses['429'].headers).toHaveProperty('Retry-After');
    expect(doc.paths['/contacts/v1/bulk'].post.responses).toHaveProperty('207');
    expect(doc.paths['/segments'].post.responses).toHaveProperty('201');
    expect(doc.paths['/funnel/v1/stages'].post.requestBody.content['application/json'].schema.required).toContain('name');
    expect(doc.paths['/funnel/v1/stages'].post.requestBody.required).toBe(true);
    // The conversation pause defaults its whole body (5 minutes): a client may send none.
    expect(doc.paths['/conversations/v1/{id}/ai/pause'].post.requestBody.required).toBe(false);
    expect(doc.paths['/media/v1'].post.requestBody.content).toHaveProperty('multipart/form-data');
    for (const path of ['/media/v1', '/{version}/{id}/media']) {
      expect(doc.paths[path].post.requestBody.content['multipart/form-data'].schema.properties.file).toEqual({ type: 'string', format: 'binary' });
    }
    const sendBody = doc.paths['/messages/v1'].post.requestBody.content['application/json'];
    expect(sendBody.schema.anyOf.map((o: any) => [o.title, o.required])).toEqual([['Message', ['to']], ['Read receipt', ['messaging_product', 'status', 'message_id']]]);
    // The compatible routes take the same body in upstream style only: each example they show has messaging_product.
    for (const path of ['/{version}/{id}/messages', '/{id}/messages'].filter((p) => doc.paths[p])) {
      const compatible = doc.paths[path].post.requestBody.content['application/json'];
      expect(compatible.schema).toEqual(sendBody.schema);
      expect(Object.keys(compatible.examples)).toEqual(expect.arrayContaining(['upstream', 'catalog', 'product', 'read']));
      expect(Object.entries(compatible.examples).filter(([, e]: [string, any]) => e.value.messaging_product !== 'whatsapp')).toEqual([]);
    }
    expect(doc.paths['/{version}/{id}/messages'].post.responses['400'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/GraphError' });
    expect(doc.paths['/{version}/{id}/messages'].post.parameters[0]).toMatchObject({ name: 'version', in: 'path', schema: { pattern: expect.any(String) } });
    expect(Object.keys(sendBody.examples)).toEqual(expect.arrayContaining(['text', 'upstream', 'image', 'template', 'location', 'reaction']));
    expect(doc.paths['/segments/{id}/members'].post.requestBody.content['application/json'].schema.required).toEqual(['action']);
    expect(doc.components.securitySchemes.apiKey).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('documents every webhook event with its signature headers and payload', () => {
    expect(Object.keys(doc.webhooks).sort()).toEqual([...EVENT_NAMES, 'webhook.test'].sort());
    expect(doc.webhooks['webhook.test'].post.requestBody.content['application/json'].schema.properties.data.required).toEqual(['webhook_id', 'message', 'sent_at']);
    expect(doc.webhooks['message.failed'].post.requestBody.content['application/json'].schema.properties.data.properties).toHaveProperty('broadcast_id');
    const stage = doc.webhooks['contact.stage_changed'].post;
    expect(stage.parameters.map((p: any) => p.name)).toEqual(expect.arrayContaining(['X-Webhook-Signature', 'X-Webhook-Event', 'X-Webhook-Timestamp', 'X-Webhook-ID', 'webhook-signature']));
    expect(stage.requestBody.content['application/json'].schema.properties.data.required).toEqual(
      expect.arrayContaining(['contact_id', 'previous_stage_id', 'new_stage_id', 'moved_at']),
    );
  });

  it('matches what the service really answers: every status documented, every JSON body valid against its schema', async () => {
    // Prepare: walk every area, successes and the usual errors
    const wa = new WaCrmClient({ baseUrl: stack.url, apiKey, fetch: recordingFetch });
    const ok = <T>(p: Promise<T>) => p.catch(() => undefined);
    const to = phone();
    await fetch(`${stack.sandboxUrl}/__sandbox/inbound`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ from: to, text: 'hola', phone_number_id: phoneNumberId }) });
    await stack.queues.idle();
    const zero = '00000000-0000-4000-8000-000000000000';

    const sent = await wa.messages.sendText(to, 'hola');
    await wa.messages.sendTemplate(phone(), 'hello_world', [], { language: 'en_US' });
    await ok(wa.messages.sendText(phone(), 'closed window'));
    await ok(wa.messages.sendTemplate(phone(), 'no_such_template'));
    await raw('POST', '/messages/v1', { to });
    await raw('POST', '/messages/v1', '{not json');
    await ok(wa.messages.retry(sent.data.id));
    await ok(wa.messages.retry(zero));
    await wa.messages.get(sent.data.id);
    await wa.conversations.list();
    await wa.conversations.get(sent.data.conversationId);
    await wa.conversations.messages(sent.data.conversationId);
    await ok(wa.ai.setConversation(sent.data.conversationId, true));
    await ok(wa.ai.pauseConversation(sent.data.conversationId, 5));
    await ok(wa.ai.pauseAll(0));
    await ok(wa.ai.pauseAll(10));
    await ok(wa.ai.toggleAll(true));
    await ok(wa.ai.status());
    await raw('GET', '/agent/v1/settings');
    await ok(wa.media.upload(Buffer.from('%PDF-1.4\n%%EOF\n'), 'document', 'a.pdf', 'application/pdf'));
    await ok(wa.media.upload(Buffer.from('plain text'), 'image', 'a.txt', 'text/plain'));
    await wa.team.list();

    const { stage } = await wa.funnel.createStage({ name: 'Lead' });
    await ok(wa.funnel.createStage({ name: '', color: 'red' }));
    await wa.funnel.listStages();
    await wa.funnel.getStage(stage.id);
    await ok(wa.funnel.getStage(zero));
    await wa.funnel.updateStage(stage.id, { color: '#123456' });
    await ok(wa.funnel.reorderStages([zero]));
    await wa.funnel.reorderStages([stage.id]);
    const { contact } = await wa.contacts.create({ phone_number: phone(), name: 'Ana', tags: ['t'] });
    await ok(wa.contacts.create({ phone_number: contact.phone_number }));
    await wa.funnel.moveContact(contact.id, stage.id);
    await ok(wa.funnel.deleteStage(stage.id));
    await wa.contacts.get(contact.id);
    await wa.contacts.update(contact.id, { name: 'Ana B' });
    await wa.contacts.list({ limit: 5 });
    await ok(wa.contacts.list({ cursor: 'forged' }));
    await wa.contacts.bulk({ operation: 'add_tags', contact_ids: [contact.id], tags: ['x'] });
    await wa.contacts.bulk({ operation: 'create', contacts: [{ phone_number: contact.phone_number }] });

    const { data: dynamic } = await wa.segments.create({ name: 'Tagged', type: 'dynamic', rules: { version: 3, filters: { tags: { any: ['t'] } } } });
    const { data: statics } = await wa.segments.create({ name: 'Static', type: 'static' });
    await ok(wa.segments.create({ name: 'Bad', type: 'dynamic' }));
    await wa.segments.list();
    await wa.segments.get(dynamic.id);
    await ok(wa.segments.get(zero));
    await wa.segments.update(dynamic.id, { name: 'Tagged 2' });
    await wa.segments.preview({ version: 3, filters: { tags: { any: ['t'] } } });
    await ok(wa.segments.addContacts(statics.id, [contact.id]));
    await ok(wa.segments.removeContact(statics.id, contact.id));
    await wa.segments.members(statics.id, { action: 'add', contactIds: [contact.id] });
    await ok(wa.segments.members(dynamic.id, { action: 'add', contactIds: [contact.id] }));
    await ok(wa.segments.evaluate(dynamic.id));
    await ok(wa.segments.usage(dynamic.id));

    const { data: hook } = await wa.webhooks.create({ name: 'h', url: 'http://127.0.0.1:9/hook', events: ['message.sent'] });
    await ok(wa.webhooks.create({ name: 'h', url: 'not a url', events: ['nope'] }));
    await wa.webhooks.list();
    await wa.webhooks.get(hook.id);
    await wa.webhooks.update(hook.id, { name: 'h2' });
    await wa.webhooks.regenerateSecret(hook.id);
    await ok(wa.webhooks.deliveries(hook.id));
    await ok(wa.webhooks.redeliver(hook.id, zero));
    await wa.webhooks.delete(hook.id);

    await ok(wa.broadcasts.create({ name: 'b', templateName: 'hello_world', contact_ids: [contact.id] }));
    await ok(wa.broadcasts.list());
    await ok(wa.broadcasts.get(zero));

    await wa.contacts.delete(contact.id);
    await raw('GET', '/team/v1', undefined, null);
    await raw('GET', '/team/v1', undefined, 'wak_' + 'x'.repeat(40));
    await raw('GET', '/docs');

    // Act: check each recorded answer against the document
    const { matchRoute } = await import('#infra/local/server.ts');
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    const problems: string[] = [];
    const checked = new Set<string>();
    for (const r of seen) {
      const match = matchRoute(r.method, r.path);
      if (!match || 'allowed' in match) continue;
      const key = `${match.route.method} ${match.route.path}`;
      checked.add(key);
      const response = doc.paths[match.route.path][match.route.method.toLowerCase()].responses[String(r.status)];
      if (!response) {
        problems.push(`${key} answered ${r.status}, which is not documented: ${JSON.stringify(r.body).slice(0, 200)}`);
        continue;
      }
      const schema = response.content?.['application/json']?.schema;
      if (!schema || !r.contentType.includes('json')) continue;
      const validate = ajv.compile({ ...schema, components: doc.components });
      if (!validate(r.body)) problems.push(`${key} ${r.status} body does not match its schema: ${ajv.errorsText(validate.errors)}; body ${JSON.stringify(r.body).slice(0, 300)}`);
    }
    // Assess
    expect(problems).toEqual([]);
    expect(checked.size).toBeGreaterThanOrEqual(45);
  }, 120_000);
});
