/**
 * The upstream sandbox on its own: Graph-API-shaped paths and error bodies, the Bearer token, media owned by
 * the uploading number, the template list, the decisions.md rules, signed webhooks and fault injection.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHmac } from 'node:crypto';
import { startSandbox, type Sandbox } from '#infra/local/sandbox/server.ts';

const TOKEN = 'test-token';
const SECRET = 'test-secret';
let sandbox: Sandbox;
let receiver: Server;
const received: { body: string; signature: string | undefined }[] = [];

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      received.push({ body: Buffer.concat(chunks).toString('utf8'), signature: req.headers['x-hub-signature-256'] as string | undefined });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  sandbox = await startSandbox({ port: 0, serviceWebhookUrl: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, appSecret: SECRET, accessToken: TOKEN });
  sandbox.setDefaultPhoneNumberId('111000111000111');
});
afterAll(async () => {
  await sandbox?.close();
  receiver?.closeAllConnections();
  await new Promise<void>((r) => receiver.close(() => r()));
});

const graph = async (method: string, path: string, body?: unknown, token = TOKEN) => {
  const res = await fetch(`${sandbox.url}/v21.0${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
};
const control = async (path: string, body: unknown) => {
  const res = await fetch(`${sandbox.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
};
const text = (to: string, body = 'hola') => ({ messaging_product: 'whatsapp', to, type: 'text', text: { body } });
const graphError = { error: { message: expect.any(String), type: expect.any(String), code: expect.any(Number), error_data: { messaging_product: 'whatsapp', details: expect.any(String) }, fbtrace_id: expect.any(String) } };

describe('sandbox Graph API', () => {
  it('refuses a wrong token with a Graph error body (190)', async () => {
    const res = await graph('POST', '/111000111000111/messages', text('+5215500000001'), 'nope');
    expect(res.status).toBe(401);
    expect(res.body).toEqual(graphError);
    expect(res.body.error.code).toBe(190);
  });

  it('applies the 24-hour window to free-form messages, not to templates', async () => {
    const to = '+5215500000002';
    const closed = await graph('POST', '/111000111000111/messages', text(to));
    expect(closed.status).toBe(400);
    expect(closed.body).toEqual(graphError);
    expect(closed.body.error.code).toBe(131047);

    const template = await graph('POST', '/111000111000111/messages', { messaging_product: 'whatsapp', to, type: 'template', template: { name: 'hello_world', language: { code: 'en_US' } } });
    expect(template.status).toBe(200);

    const inbound = await control('/__sandbox/inbound', { from: to, text: 'hola' });
    expect(inbound.body.wamid).toMatch(/^wamid\./);
    const open = await graph('POST', '/111000111000111/messages', text(to, 'ya'));
    expect(open.status).toBe(200);
    expect(open.body).toEqual({ messaging_product: 'whatsapp', contacts: [{ input: to, wa_id: to.slice(1) }], messages: [{ id: expect.stringMatching(/^wamid\./) }] });

    const sent = (await fetch(`${sandbox.url}/__sandbox/sent?to=${encodeURIComponent(to)}`).then((r) => r.json())) as any[];
    expect(sent.map((p: any) => p.type)).toEqual(['template', 'text']);
  });

  it.each([130472, 131026, 131042, 131048])('answers %i for a recipient number ending in it', async (code) => {
    const res = await graph('POST', '/111000111000111/messages', { messaging_product: 'whatsapp', to: `+52155${code}`, type: 'template', template: { name: 'hello_world', language: { code: 'en_US' } } });
    expect(res.body.error.code).toBe(code);
  });

  it('knows its templates (those of decisions.md and the shapes of Meta\'s examples) and refuses others with 132000', async () => {
    const res = await graph('GET', '/waba-1/message_templates');
    expect(res.status).toBe(200);
    expect(res.body.data.map((t: any) => [t.name, t.language])).toEqual([
      ['hello_world', 'en_US'], ['order_update', 'es_MX'], ['promo_header', 'es_MX'], ['reminder_buttons', 'es_MX'],
      ['sample_shipping_confirmation', 'en_US'], ['sample_purchase_feedback', 'en_US'], ['sample_purchase_buttons', 'en_US'],
      ['sample_flow_signup', 'en_US'], ['intro_catalog_offer', 'en_US'], ['sample_issue_resolution', 'en_US'],
    ]);
    const unknown = await graph('POST', '/111000111000111/messages', { messaging_product: 'whatsapp', to: '+5215500000003', type: 'template', template: { name: 'nope', language: { code: 'es_MX' } } });
    expect(unknown.body.error.code).toBe(132000);
  });

  it('answers 131052 for an unreachable media link', async () => {
    const to = '+5215500000004';
    await control('/__sandbox/window', { to });
    const res = await graph('POST', '/111000111000111/messages', { messaging_product: 'whatsapp', to, type: 'image', image: { link: 'https://sandbox-unreachable.example/x.jpg' } });
    expect(res.body.error.code).toBe(131052);
  });

  it('stores uploaded media for the uploading number only, and serves its bytes with the token', async () => {
    const form = new FormData();
    form.set('messaging_product', 'whatsapp');
    form.set('type', 'image/png');
    form.set('file', new Blob([Buffer.from('png-bytes')], { type: 'image/png' }), 'a.png');
    const up = await fetch(`${sandbox.url}/v21.0/111000111000111/media`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` }, body: form });
    const { id } = (await up.json()) as any;
    expect(id).toMatch(/^\d+$/);

    const info = await graph('GET', `/${id}?phone_number_id=111000111000111`);
    expect(info.body).toEqual({ messaging_product: 'whatsapp', id, url: expect.any(String), mime_type: 'image/png', sha256: expect.stringMatching(/^[0-9a-f]{64}$/), file_size: 9 });
    const other = await graph('GET', `/${id}?phone_number_id=222000222000222`);
    expect(other.status).toBe(400);
    // Meta's unknown object: GraphMethodException code 100, subcode 33.
    expect(other.body).toEqual({ error: { ...graphError.error, type: 'GraphMethodException', code: 100, error_subcode: 33 } });

    const bytes = await fetch(info.body.url, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(Buffer.from(await bytes.arrayBuffer()).toString()).toBe('png-bytes');
    expect((await fetch(info.body.url)).status).toBe(401);
  });

  it('signs webhooks with X-Hub-Signature-256 and shapes them like the Cloud API', async () => {
    received.length = 0;
    const sent = await graph('POST', '/111000111000111/messages', { messaging_product: 'whatsapp', to: '+5215500000005', type: 'template', template: { name: 'hello_world', language: { code: 'en_US' } } });
    await control('/__sandbox/status', { wamid: sent.body.messages[0].id, status: 'failed', code: 131026 });
    const [hook] = received;
    expect(hook.signature).toBe(`sha256=${createHmac('sha256', SECRET).update(hook.body).digest('hex')}`);
    const payload = JSON.parse(hook.body);
    expect(payload).toMatchObject({ object: 'whatsapp_business_account', entry: [{ changes: [{ field: 'messages', value: { metadata: { phone_number_id: '111000111000111' } } }] }] });
    expect(payload.entry[0].changes[0].value.statuses[0]).toMatchObject({ id: sent.body.messages[0].id, status: 'failed', recipient_id: '5215500000005', errors: [{ code: 131026 }] });
  });

  it('injects faults: 500, throttling 130429, then answers normally', async () => {
    await control('/__sandbox/faults', { kind: 'error500', count: 1, target: 'templates' });
    await control('/__sandbox/faults', { kind: 'throttle', count: 1, target: 'templates' });
    expect((await graph('GET', '/w/message_templates')).status).toBe(500);
    const throttled = await graph('GET', '/w/message_templates');
    expect(throttled.status).toBe(429);
    expect(throttled.body.error.code).toBe(130429);
    expect((await graph('GET', '/w/message_templates')).status).toBe(200);
  });
});
