import './env.ts';
import { invoke, newTenant } from '../../support/api.ts';
import { EVENT_NAMES } from '#shared/events/names.ts';

const body = (over: Record<string, unknown> = {}) => ({ name: 'CRM sync', url: 'https://example.com/hooks', events: ['contact.created'], ...over });

describe('webhook subscriptions', () => {
  it('creates a subscription and shows the secret on create only', async () => {
    // Prepare
    const t = await newTenant(['webhooks:write']);

    // Act
    const created = await invoke('POST /user-webhooks', { apiKey: t.apiKey, body: body({ events: ['contact.created', 'contact.stage_changed'] }) });
    const got = await invoke('GET /user-webhooks/{id}', { apiKey: t.apiKey, params: { id: created.body.data.id } });
    const list = await invoke('GET /user-webhooks', { apiKey: t.apiKey });

    // Assess
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      data: {
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        name: 'CRM sync',
        url: 'https://example.com/hooks',
        events: ['contact.created', 'contact.stage_changed'],
        secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
        createdAt: expect.any(String),
      },
    });
    expect(got.status).toBe(200);
    expect(got.body.data).toMatchObject({ id: created.body.data.id, name: 'CRM sync', enabled: true, disabledReason: null });
    expect(got.body.data.secret).toBeUndefined();
    expect(list.body.data).toHaveLength(1);
    expect(list.body.data[0].secret).toBeUndefined();
  });

  it('accepts "*" and every event name of the contract', async () => {
    const t = await newTenant(['webhooks:write']);
    const all = await invoke('POST /user-webhooks', { apiKey: t.apiKey, body: body({ events: ['*'] }) });
    const each = await invoke('POST /user-webhooks', { apiKey: t.apiKey, body: body({ events: [...EVENT_NAMES] }) });
    expect(all.status).toBe(201);
    expect(each.status).toBe(201);
    expect(each.body.data.events).toEqual([...EVENT_NAMES]);
  });

  it.each([
    ['an unknown event name', { events: ['contact.created', 'contact.exploded'] }, 'events'],
    ['no events', { events: [] }, 'events'],
    ['events that are not a list', { events: 'contact.created' }, 'events'],
    ['no name', { name: undefined }, 'name'],
    ['a URL that is not one', { url: 'not a url' }, 'url'],
    ['a non-http scheme', { url: 'ftp://example.com/x' }, 'url'],
    ['credentials in the URL', { url: 'https://user:pw@example.com/x' }, 'url'],
    ['a metadata address', { url: 'http://169.254.169.254/latest' }, 'url'],
    ['a line break in the URL (the parser drops it: the URL stored is not the one called)', { url: 'https://example.com/a\r\nX-Injected: 1' }, 'url'],
    ['a secret of its own (the service issues it)', { secret: 'mine' }, 'secret'],
  ])('refuses %s with 400', async (_label, over, field) => {
    const t = await newTenant(['webhooks:write']);
    const res = await invoke('POST /user-webhooks', { apiKey: t.apiKey, body: body(over) });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'validation_error', message: expect.any(String), details: { [field]: [expect.any(String)] } });
  });

  it('names the unknown events in the error', async () => {
    const t = await newTenant(['webhooks:write']);
    const res = await invoke('POST /user-webhooks', { apiKey: t.apiKey, body: body({ events: ['message.sent', 'nope', 'contact.moved'] }) });
    expect(res.body.details.events[0]).toBe('unknown event names: nope, contact.moved');
  });

  it('creates a paused subscription with enabled: false, and refuses an enabled that is no boolean', async () => {
    const t = await newTenant(['webhooks:write']);
    const paused = await invoke('POST /user-webhooks', { apiKey: t.apiKey, body: body({ enabled: false }) });
    expect(paused.status).toBe(201);
    expect((await invoke('GET /user-webhooks/{id}', { apiKey: t.apiKey, params: { id: paused.body.data.id } })).body.data).toMatchObject({ enabled: false, disabledReason: 'manual', disabledAt: expect.any(String) });
    const bad = await invoke('POST /user-webhooks', { apiKey: t.apiKey, body: body({ url: 'https://example.org/other', enabled: 'no' }) });
    expect(bad.status).toBe(400);
    expect(bad.body.details).toEqual({ enabled: ['must be a boolean'] });
  });

  it('updates name, url, events and the enabled flag', async () => {
    const t = await newTenant(['webhooks:write']);
    const { body: { data: s } } = await invoke('POST /user-webhooks', { apiKey: t.apiKey, body: body() });
    const res = await invoke('PATCH /user-webhooks/{id}', {
      apiKey: t.apiKey,
      params: { id: s.id },
      body: { name: 'Renamed', url: 'https://example.org/h', events: ['*'], enabled: false },
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ name: 'Renamed', url: 'https://example.org/h', events: ['*'], enabled: false, disabledReason: 'manual' });
    const again = await invoke('PATCH /user-webhooks/{id}', { apiKey: t.apiKey, params: { id: s.id }, body: { enabled: true } });
    expect(again.body.data).toMatchObject({ enabled: true, disabledReason: null, disabledAt: null });
    const bad = await invoke('PATCH /user-webhooks/{id}', { apiKey: t.apiKey, params: { id: s.id }, body: { events: ['bogus'] } });
    expect(bad.status).toBe(400);
    // A secret is issued, never set: a PATCH that names one is refused rather than silently ignored.
    const secret = await invoke('PATCH /user-webhooks/{id}', { apiKey: t.apiKey, params: { id: s.id }, body: { secret: 'mine', name: 'x' } });
    expect(secret.status).toBe(400);
    expect(secret.body.details).toEqual({ secret: [expect.stringContaining('regenerate-secret')] });
    expect((await invoke('GET /user-webhooks/{id}', { apiKey: t.apiKey, params: { id: s.id } })).body.data.name).toBe('Renamed');
  });

  it('regenerates the secret and shows the new one once', async () => {
    const t = await newTenant(['webhooks:write']);
    const { body: { data: s } } = await invoke('POST /user-webhooks', { apiKey: t.apiKey, body: body() });
    const res = await invoke('POST /user-webhooks/{id}/regenerate-secret', { apiKey: t.apiKey, params: { id: s.id } });
    expect(res.status).toBe(200);
    expect(res.body.data.id).toBe(s.id);
    expect(res.body.data.secret).toMatch(/^whsec_/);
    expect(res.body.data.secret).not.toBe(s.secret);
  });

  it('deletes a subscription; afterwards it is not found', async () => {
    const t = await newTenant(['webhooks:write']);
    const { body: { data: s } } = await invoke('POST /user-webhooks', { apiKey: t.apiKey, body: body() });
    const del = await invoke('DELETE /user-webhooks/{id}', { apiKey: t.apiKey, params: { id: s.id } });
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ success: true, id: s.id });
    expect((await invoke('GET /user-webhooks/{id}', { apiKey: t.apiKey, params: { id: s.id } })).status).toBe(404);
    expect((await invoke('DELETE /user-webhooks/{id}', { apiKey: t.apiKey, params: { id: s.id } })).status).toBe(404);
  });

  it('answers 404 for an unknown id or one that is not a UUID (on every route), 403 for another account\'s subscription', async () => {
    const t = await newTenant(['webhooks:write']);
    const other = await newTenant(['webhooks:write']);
    const { body: { data: s } } = await invoke('POST /user-webhooks', { apiKey: other.apiKey, body: body() });
    const unknown = await invoke('GET /user-webhooks/{id}', { apiKey: t.apiKey, params: { id: '00000000-0000-4000-8000-000000000000' } });
    const foreign = await invoke('PATCH /user-webhooks/{id}', { apiKey: t.apiKey, params: { id: s.id }, body: { name: 'mine now' } });
    const malformed = await Promise.all([
      invoke('GET /user-webhooks/{id}', { apiKey: t.apiKey, params: { id: 'abc' } }),
      invoke('PATCH /user-webhooks/{id}', { apiKey: t.apiKey, params: { id: 'abc' }, body: { name: 'x' } }),
      invoke('DELETE /user-webhooks/{id}', { apiKey: t.apiKey, params: { id: 'abc' } }),
      invoke('POST /user-webhooks/{id}/test', { apiKey: t.apiKey, params: { id: 'abc' } }),
      invoke('POST /user-webhooks/{id}/regenerate-secret', { apiKey: t.apiKey, params: { id: 'abc' } }),
      invoke('GET /user-webhooks/{id}/deliveries', { apiKey: t.apiKey, params: { id: 'abc' } }),
      invoke('POST /user-webhooks/{id}/deliveries/{deliveryId}/redeliver', { apiKey: t.apiKey, params: { id: s.id, deliveryId: 'abc' } }),
    ]);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: 'not_found', message: expect.any(String) });
    expect(foreign.status).toBe(403);
    expect(foreign.body).toEqual({ error: 'forbidden', message: expect.any(String) });
    expect(malformed.map((r) => [r.status, r.body.error])).toEqual(Array(7).fill([404, 'not_found']));
    expect((await invoke('GET /user-webhooks/{id}', { apiKey: other.apiKey, params: { id: s.id } })).body.data.name).toBe('CRM sync');
  });

  it('requires the webhooks:write scope', async () => {
    const t = await newTenant(['contacts:read']);
    const res = await invoke('GET /user-webhooks', { apiKey: t.apiKey });
    expect(res.status).toBe(403);
    expect(res.body.message).toContain('webhooks:write');
  });

  it('answers invalid_json for a broken body', async () => {
    const t = await newTenant(['webhooks:write']);
    const res = await invoke('POST /user-webhooks', { apiKey: t.apiKey, rawBody: '{"name":' });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_json');
  });
});
