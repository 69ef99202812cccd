import './production-env.ts';
import { invoke, newTenant } from '../../support/api.ts';
import type { LocalQueues } from '#infra/local/queues.ts';
import { startQueues } from '../../support/queues.ts';
import { commit, newEvent } from '#shared/events/outbox.ts';
import { config } from '#shared/config.ts';
import { updateSubscription } from '#shared/webhooks/subscription-store.ts';
import { startReceiver, type Receiver } from './receiver.ts';

let queues: LocalQueues;
let r: Receiver;

beforeAll(async () => {
  queues = await startQueues({ retryDelayMs: 50 });
  r = await startReceiver();
});
afterAll(async () => {
  await queues.stop();
  await r.close();
});

describe('webhook targets in production mode', () => {
  it('runs with private targets refused', () => {
    expect(config.allowPrivateNetworkTargets).toBe(false);
  });

  it.each([
    ['plain http', 'http://example.com/hooks'],
    ['a loopback literal', 'https://127.0.0.1/hooks'],
    ['an IPv6 loopback literal', 'https://[::1]/hooks'],
    ['a private literal', 'https://10.1.2.3/hooks'],
    ['an IPv4-mapped private literal', 'https://[::ffff:192.168.0.1]/hooks'],
    ['a link-local literal', 'https://169.254.10.10/hooks'],
    ['localhost', 'https://localhost:8443/hooks'],
  ])('refuses %s on create and update', async (_label, url) => {
    const t = await newTenant(['webhooks:write']);
    const res = await invoke('POST /user-webhooks', { apiKey: t.apiKey, body: { name: 'x', url, events: ['*'] } });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.details)).toEqual(['url']);
    const ok = await invoke('POST /user-webhooks', { apiKey: t.apiKey, body: { name: 'x', url: 'https://example.com/h', events: ['*'] } });
    expect(ok.status).toBe(201);
    const upd = await invoke('PATCH /user-webhooks/{id}', { apiKey: t.apiKey, params: { id: ok.body.data.id }, body: { url } });
    expect(upd.status).toBe(400);
  });

  it('delivers nothing to a name that resolves to a private address (checked at connect time)', async () => {
    // Prepare: a stored target that passed the create check but resolves to loopback (DNS rebinding).
    const t = await newTenant(['webhooks:write']);
    const created = await invoke('POST /user-webhooks', { apiKey: t.apiKey, body: { name: 'x', url: 'https://example.com/h', events: ['*'] } });
    const id = created.body.data.id as string;
    const port = new URL(r.url).port;
    await updateSubscription(t.businessId, id, { url: `http://localhost:${port}/hooks` });

    // Act
    await commit([], [newEvent(t.businessId, 'contact.created', { contact_id: 'c' })]);
    await queues.idle();
    const test = await invoke('POST /user-webhooks/{id}/test', { apiKey: t.apiKey, params: { id } });

    // Assess
    expect(r.received).toHaveLength(0);
    const list = await invoke('GET /user-webhooks/{id}/deliveries', { apiKey: t.apiKey, params: { id } });
    const d = list.body.data.find((x: any) => x.event === 'contact.created');
    expect(d).toMatchObject({ status: 'failed', failureReason: 'blocked_address', attemptCount: 1 });
    expect(d.attempts[0]).toMatchObject({ statusCode: null, error: expect.stringMatching(/^blocked_address/) });
    expect(test.body.data).toMatchObject({ success: false, statusCode: null, error: expect.stringMatching(/^blocked_address/) });
  });
});
