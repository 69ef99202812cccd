/** The bounds on a business's subscriptions: at most 16, and one per target (URL and events), under concurrent requests too. */
import './env.ts';
import { invoke, newTenant, type TestTenant } from '../../support/api.ts';
import { MAX_SUBSCRIPTIONS_PER_BUSINESS } from '#shared/webhooks/service.ts';

const create = (t: TestTenant, url: string, events: string[] = ['contact.created']) =>
  invoke('POST /user-webhooks', { apiKey: t.apiKey, body: { name: 'hook', url, events } });

describe('webhook subscription limits', () => {
  it('refuses the 17th subscription of a business with 400 limit_reached, and takes one again after a delete', async () => {
    // Prepare
    const t = await newTenant(['webhooks:write']);
    const created = [];
    for (let i = 0; i < MAX_SUBSCRIPTIONS_PER_BUSINESS; i++) created.push(await create(t, `https://example.com/hooks/${i}`));

    // Act
    const over = await create(t, 'https://example.com/hooks/over');
    await invoke('DELETE /user-webhooks/{id}', { apiKey: t.apiKey, params: { id: created[0].body.data.id } });
    const afterDelete = await create(t, 'https://example.com/hooks/over');

    // Assess
    expect(MAX_SUBSCRIPTIONS_PER_BUSINESS).toBe(16);
    expect(created.map((r) => r.status)).toEqual(Array(16).fill(201));
    expect(over.status).toBe(400);
    expect(over.body).toEqual({ error: 'limit_reached', message: expect.stringContaining('16') });
    expect(afterDelete.status).toBe(201);
    expect((await invoke('GET /user-webhooks', { apiKey: t.apiKey })).body.data).toHaveLength(16);
  });

  it('keeps the cap under 30 concurrent creates', async () => {
    const t = await newTenant(['webhooks:write']);
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => create(t, `https://example.com/race/${i}`)));
    expect(answers.filter((r) => r.status === 201)).toHaveLength(16);
    expect(answers.filter((r) => r.status === 400 && r.body.error === 'limit_reached')).toHaveLength(14);
    expect((await invoke('GET /user-webhooks', { apiKey: t.apiKey })).body.data).toHaveLength(16);
  });

  it('refuses a second subscription to the same URL with the same events with 409 duplicate_webhook', async () => {
    // Prepare
    const t = await newTenant(['webhooks:write']);
    const first = await create(t, 'https://example.com/same', ['contact.created', 'message.sent']);

    // Act: the same target written differently (event order, host case), and other targets.
    const same = await create(t, 'https://EXAMPLE.com/same', ['message.sent', 'contact.created', 'message.sent']);
    const otherEvents = await create(t, 'https://example.com/same', ['contact.created']);
    const otherUrl = await create(t, 'https://example.com/other', ['contact.created', 'message.sent']);
    const otherBusiness = await create(await newTenant(['webhooks:write']), 'https://example.com/same', ['contact.created', 'message.sent']);

    // Assess
    expect(first.status).toBe(201);
    expect(same.status).toBe(409);
    expect(same.body).toEqual({ error: 'duplicate_webhook', message: expect.any(String), existing_webhook_id: first.body.data.id });
    expect([otherEvents.status, otherUrl.status, otherBusiness.status]).toEqual([201, 201, 201]);
  });

  it('takes a fragment (never sent) and "*" beside event names (all of them) as the same target', async () => {
    const t = await newTenant(['webhooks:write']);
    const first = await create(t, 'https://example.com/hook', ['*']);
    const withFragment = await create(t, 'https://example.com/hook#part', ['*']);
    const allAndOne = await create(t, 'https://example.com/hook', ['*', 'message.sent']);
    expect(first.status).toBe(201);
    expect([withFragment.status, allAndOne.status]).toEqual([409, 409]);
    expect(allAndOne.body.existing_webhook_id).toBe(first.body.data.id);
  });

  it('creates one subscription of 10 identical concurrent creates', async () => {
    const t = await newTenant(['webhooks:write']);
    const answers = await Promise.all(Array.from({ length: 10 }, () => create(t, 'https://example.com/twice')));
    expect(answers.filter((r) => r.status === 201)).toHaveLength(1);
    expect(answers.filter((r) => r.status === 409)).toHaveLength(9);
    expect((await invoke('GET /user-webhooks', { apiKey: t.apiKey })).body.data).toHaveLength(1);
  });

  it('refuses a change that makes a subscription the duplicate of another, and frees a target that was changed or deleted', async () => {
    // Prepare
    const t = await newTenant(['webhooks:write']);
    const a = (await create(t, 'https://example.com/a')).body.data;
    const b = (await create(t, 'https://example.com/b')).body.data;

    // Act
    const toA = await invoke('PATCH /user-webhooks/{id}', { apiKey: t.apiKey, params: { id: b.id }, body: { url: 'https://example.com/a' } });
    const moved = await invoke('PATCH /user-webhooks/{id}', { apiKey: t.apiKey, params: { id: a.id }, body: { url: 'https://example.com/a2' } });
    const intoFreed = await create(t, 'https://example.com/a');
    await invoke('DELETE /user-webhooks/{id}', { apiKey: t.apiKey, params: { id: b.id } });
    const intoDeleted = await create(t, 'https://example.com/b');

    // Assess
    expect(toA.status).toBe(409);
    expect(toA.body).toMatchObject({ error: 'duplicate_webhook', existing_webhook_id: a.id });
    expect((await invoke('GET /user-webhooks/{id}', { apiKey: t.apiKey, params: { id: b.id } })).status).toBe(404);
    expect(moved.status).toBe(200);
    expect(moved.body.data.url).toBe('https://example.com/a2');
    expect(intoFreed.status).toBe(201);
    expect(intoDeleted.status).toBe(201);
  });
});
