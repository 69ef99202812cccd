/**
 * The main flows with every function started from its synthesized package, with the environment the synthesized
 * template gives it (references resolved to the local stand-ins), each in a process of its own
 * (infra/local/deployed.ts): what `cdk deploy` puts in a customer's account, run on this machine. A setting or a code path the template does not provide fails here.
 *
 * Prepare: a business and key written to the shared table by this test process. Act: HTTP calls to the API, the
 * sandbox playing WhatsApp and the customer. Assess: through the API, the sandbox's records and a webhook receiver.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';
import { newEvent, outboxPut } from '#shared/events/outbox.ts';
import { routes } from '#shared/routes.ts';
import { startDeployedStack, type DeployedStack } from '#infra/local/deployed.ts';
import { SANDBOX_APP_SECRET } from '#infra/local/sandbox/credentials.ts';
import { callSandbox, callWith, startFileServer, startReceiver, type Call } from '../../support/http.ts';
import { bigWav, photoJpeg } from '../../integration/media/files.ts';
import { newTenant, type TestTenant } from '../../support/api.ts';
import { waitFor } from '../../support/wait.ts';
import { randomPhone } from '../messages/stack.ts';

let d: DeployedStack;
let tenant: TestTenant;
let call: Call;
let sandbox: ReturnType<typeof callSandbox>;

// A table of its own: the template's scheduled sweep acts on every business of its table.
process.env.TABLE_NAME = `deployed-${Date.now()}`;

beforeAll(async () => {
  d = await startDeployedStack({ dynamodbEndpoint: process.env.DYNAMODB_ENDPOINT!, tableName: process.env.TABLE_NAME!, minuteMs: 200 });
  tenant = await newTenant(undefined, 'Deployed-mode e2e');
  call = callWith(d.url, tenant.apiKey);
  sandbox = callSandbox(d.sandboxUrl);
  // The AI agent answers every inbound message of the business at once (no debounce window), through Bedrock.
  expect((await call('PATCH', '/agent/v1/settings', { debounceSeconds: 0 })).status).toBe(200);
}, 300_000);
afterAll(() => d?.stop());

const inbound = async (from: string, text: string) => {
  const res = await sandbox('POST', '/__sandbox/inbound', { from, text, phone_number_id: tenant.phoneNumberId });
  expect(res.status).toBe(200);
  await d.queues.idle(60_000);
  return res.body as { wamid: string };
};

describe('deployed mode: functions configured by the synthesized template', () => {
  it('answers a request to every route from its function\'s package without a 5xx (the reference pages with 200)', async () => {
    // A request each, with ids that do not exist and empty bodies: every function starts from its package with its
    // template environment, authenticates against the table and answers (a setting it lacks would be a 500).
    const failures: string[] = [];
    const ok = new Set(['GET /openapi.json', 'GET /docs', 'GET /docs/scalar.js']);
    // Ten routes at a time, their containers stopped after each ten.
    for (let i = 0; i < routes.length; i += 10) {
      await Promise.all(routes.slice(i, i + 10).map(async (route) => {
        const path = route.path.replace('{version}', 'v23.0').replace(/\{[A-Za-z]+\}/g, () => randomUUID());
        const res = await call(route.method, path, route.method === 'GET' || route.method === 'DELETE' ? undefined : {});
        const key = `${route.method} ${route.path}`;
        if (res.status >= 500 || (ok.has(key) && res.status !== 200)) failures.push(`${key}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
      }));
      await d.recycle();
    }
    expect(failures).toEqual([]);
  }, 180_000);

  it('receives a signed inbound webhook, sends a text with the secret token, and applies its status webhook', async () => {
    const to = randomPhone();
    const received = await inbound(to, 'Hola, ¿tienen envíos?');

    const sent = await call('POST', '/messages/v1', { to, content: 'Sí, a todo el país.' });
    expect(sent.status).toBe(200);
    expect(sent.body.data).toMatchObject({ status: 'sent', conversationId: expect.any(String) });
    const payloads = (await sandbox('GET', `/__sandbox/sent?to=${encodeURIComponent(to)}`)).body as any[];
    expect(payloads.map((p) => p.text?.body)).toContain('Sí, a todo el país.');

    const wamid = sent.body.messages[0].wamid;
    expect((await sandbox('POST', '/__sandbox/status', { wamid, status: 'delivered' })).status).toBe(200);
    await d.queues.idle(60_000);
    const message = await call('GET', `/messages/v1/${sent.body.data.id}`);
    expect(message.body.message).toMatchObject({ status: 'delivered', deliveredAt: expect.any(String) });

    const conversation = await call('GET', `/conversations/v1/${sent.body.data.conversationId}/messages`);
    expect(conversation.body.messages.map((m: any) => m.wamid)).toContain(received.wamid);
    // The functions got the stack's settings from the template, not from this process.
    expect(d.environments.get('http/messages/send')).toMatchObject({ UPSTREAM_SECRET_ARN: expect.stringMatching(/^arn:aws:secretsmanager:/), TABLE_NAME: process.env.TABLE_NAME });
  }, 120_000);

  it('answers an inbound message with the AI worker\'s package, through Bedrock\'s Converse API', async () => {
    const from = randomPhone();
    const asked = d.bedrock.models.length;

    await inbound(from, '¿Hacen envíos a Mérida?');

    const sent = (await sandbox('GET', `/__sandbox/sent?to=${encodeURIComponent(from)}`)).body as any[];
    const replies = sent.filter((p) => String(p.text?.body).startsWith('[AI]'));
    expect(replies).toHaveLength(1);
    expect(replies[0].text.body).toContain('¿Hacen envíos a Mérida?');
    // The deployment's model (the template's AI_MODEL), asked through the SDK's endpoint variable as in AWS.
    expect(d.bedrock.models.slice(asked)).toEqual([d.environments.get('workers/ai')!.AI_MODEL]);
  }, 120_000);

  it('takes a Cloud API webhook the client signs and posts itself, and the sandbox then knows the customer wrote (a reply goes out)', async () => {
    // Prepare: Meta's inbound message, signed with the local app secret
    const from = randomPhone();
    const body = JSON.stringify({ object: 'whatsapp_business_account', entry: [{ id: 'waba', changes: [{ field: 'messages', value: {
      messaging_product: 'whatsapp', metadata: { display_phone_number: '15550000000', phone_number_id: tenant.phoneNumberId },
      contacts: [{ profile: { name: 'Ana' }, wa_id: from.slice(1) }],
      messages: [{ from: from.slice(1), id: `wamid.${randomUUID()}`, timestamp: String(Math.floor(Date.now() / 1000)), type: 'text', text: { body: 'Hola desde un webhook firmado' } }],
    } }] }] });
    const signature = `sha256=${createHmac('sha256', SANDBOX_APP_SECRET).update(body).digest('hex')}`;

    // Act
    const posted = await fetch(`${d.url}/webhooks/upstream`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature }, body });
    await d.queues.idle(60_000);
    const reply = await call('POST', '/messages/v1', { to: from, content: 'Hola Ana' });

    // Assess
    expect(posted.status).toBe(200);
    expect([reply.status, reply.body.data?.status]).toEqual([200, 'sent']);
  }, 120_000);

  it('serves the OpenAPI document the synthesis generated: every operation with its own responses and body', async () => {
    const doc = (await call('GET', '/openapi.json')).body as any;
    expect(Object.keys(doc.paths['/funnel/v1/stages'].post.responses)).toContain('201');
    expect(doc.paths['/funnel/v1/stages'].post.requestBody).toBeDefined();
  }, 60_000);

  it('refuses an inbound webhook signed with another secret (the app secret comes from the stack secret)', async () => {
    const body = JSON.stringify({ object: 'whatsapp_business_account', entry: [] });
    const forged = `sha256=${createHmac('sha256', 'not-the-app-secret').update(body).digest('hex')}`;
    const res = await fetch(`${d.url}/webhooks/upstream`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-hub-signature-256': forged }, body });
    expect(res.status).toBe(401);
  }, 60_000);

  it('uploads media by presigned URL and completes it; its Cloud API media URL downloads with the access token', async () => {
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
    const created = await call('POST', '/media/v1/uploads', { type: 'image', file_size: png.length, mime_type: 'image/png' });
    expect(created.status).toBe(201);
    const put = await fetch(created.body.upload_url, { method: 'PUT', headers: created.body.headers, body: png });
    expect(put.status).toBe(200);
    const completed = await call('POST', `/media/v1/uploads/${created.body.upload_id}/complete`);
    expect(completed.status).toBe(200);
    expect(completed.body).toMatchObject({ media_id: expect.any(String), mime_type: 'image/png', type: 'image' });

    // The media object's url is the public file route's package (its bucket form from the template's environment).
    const info = await call('GET', `/v23.0/${completed.body.media_id}`);
    expect(info.status).toBe(200);
    const file = await fetch(info.body.url, { headers: { authorization: `Bearer ${tenant.apiKey}` } });
    expect(file.status).toBe(200);
    expect(Buffer.from(await file.arrayBuffer())).toEqual(png);
  }, 120_000);

  it('converts media in the media worker\'s package, with the sharp and ffmpeg it ships', async () => {
    // Prepare: a customer who wrote (the 24-hour window), a 5 MB+ photo and a 16 MB+ recording on a host of theirs
    const to = randomPhone();
    await inbound(to, 'Mándame la foto y el audio');
    const [photo, recording] = await Promise.all([photoJpeg(3000, 2200, 24), bigWav(24)]);
    expect(photo.length).toBeGreaterThan(5 * 1024 * 1024);
    expect(recording.length).toBeGreaterThan(16 * 1024 * 1024);
    const header = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
    const files = await startFileServer({ '/photo.jpg': photo, '/recording.wav': recording, '/sandbox-unreachable/header.png': header });
    try {
      // Act
      const image = await call('POST', '/messages/v1', { to, type: 'image', image: { link: `${files.url}/photo.jpg`, caption: 'La foto' } });
      const audio = await call('POST', '/messages/v1', { to, type: 'audio', audio: { link: `${files.url}/recording.wav` }, autoConvert: true });
      // A template header link the upstream cannot fetch: proxied by the same worker, then sent by id.
      const template = await call('POST', '/messages/v1', { to, type: 'template', templateName: 'promo_header', template_parameters: ['Ana'], header_media: { type: 'image', url: `${files.url}/sandbox-unreachable/header.png` } });

      // Assess: both sent by the id of what the worker made and uploaded (sharp compressed the photo, ffmpeg the audio)
      expect(image.status).toBe(200);
      expect(image.body.data).toMatchObject({ messageType: 'image', status: 'sent' });
      expect(audio.status).toBe(200);
      expect(audio.body.data).toMatchObject({ messageType: 'audio', status: 'sent' });
      const payloads = (await sandbox('GET', `/__sandbox/sent?to=${encodeURIComponent(to)}`)).body as any[];
      expect(payloads.find((p) => p.type === 'image').image).toEqual({ id: expect.any(String), caption: 'La foto' });
      expect(payloads.find((p) => p.type === 'audio').audio).toEqual({ id: expect.any(String) });
      expect(template.status).toBe(200);
      expect(payloads.find((p) => p.type === 'template').template.components.find((c: any) => c.type === 'header').parameters[0]).toEqual({ type: 'image', image: { id: expect.any(String) } });
      expect(d.environments.has('workers/media')).toBe(true);
    } finally {
      await files.stop();
    }
  }, 120_000);

  it('retries a media link from the retry function\'s package: the photo, now over 5 MB, is compressed by the media worker and sent by id', async () => {
    // Prepare: a customer who has not written (131047), a small photo at the link when it is first sent
    const to = randomPhone();
    const served: Record<string, Buffer> = { '/later.jpg': await photoJpeg(64, 64) };
    const files = await startFileServer(served);
    try {
      const first = await call('POST', '/messages/v1', { to, type: 'image', image: { link: `${files.url}/later.jpg`, caption: 'Más tarde' } });
      expect(first.body).toMatchObject({ code: '131047', data: { status: 'failed' } });
      served['/later.jpg'] = await photoJpeg(3000, 2200, 24);
      await inbound(to, 'Ya puedes');

      // Act
      const retry = await call('POST', `/messages/v1/${first.body.data.id}/retry`);

      // Assess: the retry planned the link again (a HEAD over 5 MB), the worker compressed it, and it went by id
      expect([retry.status, retry.body.data?.status]).toEqual([200, 'sent']);
      const payloads = (await sandbox('GET', `/__sandbox/sent?to=${encodeURIComponent(to)}`)).body as any[];
      expect(payloads.at(-1).image).toEqual({ id: expect.any(String), caption: 'Más tarde' });
    } finally {
      await files.stop();
    }
  }, 120_000);

  it('delivers a signed event to a subscription', async () => {
    const receiver = await startReceiver();
    try {
      const hook = await call('POST', '/user-webhooks', { name: 'CRM', url: receiver.url, events: ['contact.created'] });
      expect(hook.status).toBe(201);
      const contact = await call('POST', '/contacts/v1', { phone_number: randomPhone(), name: 'Deployed Dana' });
      expect(contact.status).toBe(201);
      await d.queues.idle(60_000);
      const delivery = receiver.received.find((r) => JSON.parse(r.body).event === 'contact.created');
      expect(delivery).toBeDefined();
      const expected = createHmac('sha256', hook.body.data.secret).update(delivery!.body).digest('hex');
      expect(delivery!.headers['x-webhook-signature']).toBe(expected);
      expect(JSON.parse(delivery!.body).data.contact_id).toBe(contact.body.contact.id);
    } finally {
      await receiver.stop();
    }
  }, 120_000);

  it('starts a scheduled broadcast through EventBridge Scheduler', async () => {
    const to = randomPhone();
    const contact = await call('POST', '/contacts/v1', { phone_number: to, name: 'Broadcast Bea' });
    const sendAt = new Date(Date.now() + 3000).toISOString();
    const created = await call('POST', '/broadcasts/v1', {
      name: 'Deployed broadcast', templateName: 'order_update', template_parameters: ['Bea', '#1'], contact_ids: [contact.body.contact.id], send_at: sendAt,
    });
    expect(created.status).toBe(201);
    expect(created.body.data.status).toBe('scheduled');
    const deadline = Date.now() + 60_000;
    let status = 'scheduled';
    while (Date.now() < deadline && status !== 'completed') {
      await new Promise((r) => setTimeout(r, 500));
      status = (await call('GET', `/broadcasts/v1/${created.body.data.id}`)).body.data.status;
    }
    expect(status).toBe('completed');
    const payloads = (await sandbox('GET', `/__sandbox/sent?to=${encodeURIComponent(to)}`)).body as any[];
    expect(payloads.filter((p) => p.template?.name === 'order_update')).toHaveLength(1);
  }, 120_000);

  it('cancels a scheduled broadcast: its schedule and its place under the cap go, and nothing is sent at its time', async () => {
    // Prepare: a broadcast due in 3 s
    const to = randomPhone();
    const contact = await call('POST', '/contacts/v1', { phone_number: to, name: 'Cancelled Cy' });
    const created = await call('POST', '/broadcasts/v1', {
      name: 'Cancelled broadcast', templateName: 'order_update', template_parameters: ['Cy', '#2'], contact_ids: [contact.body.contact.id], send_at: new Date(Date.now() + 3000).toISOString(),
    });
    expect(created.status).toBe(201);
    const waiting = async () => (await db.send(new QueryCommand({
      TableName: table(), KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': keys.scheduledBroadcastsPk(tenant.businessId) },
    }))).Items?.map((i) => i.broadcastId) ?? [];
    expect(await waiting()).toContain(created.body.data.id);
    const scheduled = () => d.queues.services.scheduler.list().filter((sch) => sch.target.input.includes(created.body.data.id));
    expect(scheduled()).toHaveLength(1);

    // Act
    const cancelled = await call('POST', `/broadcasts/v1/${created.body.data.id}/cancel`);

    // Assess: cancelled by the cancel function (its grants: the table's write, the Scheduler's delete), and still so after its time
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.data.status).toBe('cancelled');
    expect(await waiting()).not.toContain(created.body.data.id);
    expect(scheduled()).toEqual([]);
    // (A started broadcast completes within about 4 s of its send_at here: see the test above.)
    await new Promise((r) => setTimeout(r, 7000));
    expect((await call('GET', `/broadcasts/v1/${created.body.data.id}`)).body.data.status).toBe('cancelled');
    const payloads = (await sandbox('GET', `/__sandbox/sent?to=${encodeURIComponent(to)}`)).body as any[];
    expect(payloads).toEqual([]);
  }, 120_000);

  it('runs the scheduled sweep on its rule\'s clock: an event whose publish was lost is fanned out', async () => {
    // Prepare: a subscription, then an event committed two minutes ago whose publish never happened.
    const hook = await call('POST', '/user-webhooks', { name: 'Sweep', url: 'http://127.0.0.1:9/hook', events: ['contact.deleted'] });
    expect(hook.status).toBe(201);
    const lost = { ...newEvent(tenant.businessId, 'contact.deleted', { contact_id: `lost-${Date.now()}` }), createdAt: new Date(Date.now() - 120_000).toISOString() };

    // Act
    await db.send(new TransactWriteCommand({ TransactItems: [outboxPut(lost)] }));

    // Assess: the sweep function re-published it and the fan-out function created its delivery.
    const deliveries = await waitFor('the lost event\'s delivery', async () => {
      const listed: { eventId: string; event: string }[] = (await call('GET', `/user-webhooks/${hook.body.data.id}/deliveries`)).body.data;
      return listed.some((x) => x.eventId === lost.id) && listed;
    }, 30_000, 200);
    expect(deliveries).toEqual([expect.objectContaining({ eventId: lost.id, event: 'contact.deleted' })]);
  }, 60_000);
});
