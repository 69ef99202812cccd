import { randomUUID } from 'node:crypto';
import { invoke, newTenant, type TestTenant } from '../../support/api.ts';
import { getConversationAi } from '#shared/ai/conversation-ai.ts';
import { putConversation } from './fixtures.ts';
import { overrideEnv } from '../../support/env.ts';

const minutesFromNow = (iso: string) => (Date.parse(iso) - Date.now()) / 60_000;

describe('conversation AI controls', () => {
  let tenant: TestTenant;
  beforeAll(async () => {
    tenant = await newTenant(['conversations:write']);
  });

  it('PATCH /conversations/v1/{id}/ai turns the AI off and on and shows the settings', async () => {
    // Prepare
    const id = await putConversation(tenant.businessId);

    // Act
    const off = await invoke('PATCH /conversations/v1/{id}/ai', { apiKey: tenant.apiKey, params: { id }, body: { aiEnabled: false } });
    const stored = await getConversationAi(tenant.businessId, id);
    const on = await invoke('PATCH /conversations/v1/{id}/ai', { apiKey: tenant.apiKey, params: { id }, body: { aiEnabled: true } });

    // Assess
    expect(off.status).toBe(200);
    expect(off.body).toEqual({ message: expect.any(String), settings: { aiEnabled: false, aiMode: 'auto', aiPausedUntil: null } });
    expect(stored?.aiEnabled).toBe(false);
    expect(on.body.settings).toEqual({ aiEnabled: true, aiMode: 'auto', aiPausedUntil: null });
  });

  it('keeps a running pause visible in the toggle response', async () => {
    const until = new Date(Date.now() + 10 * 60_000).toISOString();
    const id = await putConversation(tenant.businessId, { aiPausedUntil: until });
    const res = await invoke('PATCH /conversations/v1/{id}/ai', { apiKey: tenant.apiKey, params: { id }, body: { aiEnabled: false, aiMode: 'auto' } });
    expect(res.body.settings).toEqual({ aiEnabled: false, aiMode: 'auto', aiPausedUntil: until });
  });

  it.each([
    ['missing aiEnabled', {}],
    ['a string aiEnabled', { aiEnabled: 'false' }],
    ['an unknown aiMode', { aiEnabled: true, aiMode: 'telepathy' }],
  ])('answers 400 validation_error for %s', async (_label, body) => {
    const id = await putConversation(tenant.businessId);
    const res = await invoke('PATCH /conversations/v1/{id}/ai', { apiKey: tenant.apiKey, params: { id }, body });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'validation_error', message: expect.any(String), details: expect.any(Object) });
  });

  it.each([
    ['PATCH /conversations/v1/{id}/ai', { aiEnabled: false }],
    ['POST /conversations/v1/{id}/ai/pause', { duration: 5 }],
  ])('%s answers 404 not_found for an unknown, foreign or malformed conversation', async (route, body) => {
    // Prepare
    const other = await newTenant();
    const foreign = await putConversation(other.businessId);

    // Act
    const results = await Promise.all([randomUUID(), foreign, 'not-a-uuid'].map((id) => invoke(route, { apiKey: tenant.apiKey, params: { id }, body })));

    // Assess
    for (const res of results) {
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'not_found', message: expect.any(String) });
    }
    expect((await getConversationAi(other.businessId, foreign))?.aiEnabled).toBe(true);
  });

  it('POST /conversations/v1/{id}/ai/pause pauses for the given minutes', async () => {
    const id = await putConversation(tenant.businessId);
    const res = await invoke('POST /conversations/v1/{id}/ai/pause', { apiKey: tenant.apiKey, params: { id }, body: { duration: 30 } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, pausedUntil: expect.any(String), message: expect.stringContaining('30 minutes') });
    expect(minutesFromNow(res.body.pausedUntil)).toBeGreaterThan(29.9);
    expect(minutesFromNow(res.body.pausedUntil)).toBeLessThanOrEqual(30);
    expect((await getConversationAi(tenant.businessId, id))?.aiPausedUntil).toBe(res.body.pausedUntil);
  });

  it.each([
    ['no body', undefined],
    ['an empty object', {}],
  ])('pauses for 5 minutes by default with %s', async (_label, body) => {
    const id = await putConversation(tenant.businessId);
    const res = await invoke('POST /conversations/v1/{id}/ai/pause', { apiKey: tenant.apiKey, params: { id }, body });
    expect(res.status).toBe(200);
    expect(minutesFromNow(res.body.pausedUntil)).toBeGreaterThan(4.9);
    expect(minutesFromNow(res.body.pausedUntil)).toBeLessThanOrEqual(5);
  });

  it.each([[0], [1441], [-5], ['10'], [null]])('refuses a conversation pause of %p minutes with 400', async (duration) => {
    const id = await putConversation(tenant.businessId);
    const res = await invoke('POST /conversations/v1/{id}/ai/pause', { apiKey: tenant.apiKey, params: { id }, body: { duration } });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation_error');
    expect(res.body.message).toMatch(/1-1440 minutes/);
    expect((await getConversationAi(tenant.businessId, id))?.aiPausedUntil).toBeNull();
  });

  it('accepts the range ends 1 and 1440', async () => {
    const id = await putConversation(tenant.businessId);
    for (const duration of [1, 1440]) {
      const res = await invoke('POST /conversations/v1/{id}/ai/pause', { apiKey: tenant.apiKey, params: { id }, body: { duration } });
      expect(res.status).toBe(200);
      expect(Math.round(minutesFromNow(res.body.pausedUntil))).toBe(duration);
    }
  });

  it('requires conversations:write', async () => {
    const reader = await newTenant(['conversations:read', 'agent:write']);
    const id = await putConversation(reader.businessId);
    const res = await invoke('PATCH /conversations/v1/{id}/ai', { apiKey: reader.apiKey, params: { id }, body: { aiEnabled: false } });
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('forbidden');
  });
});

describe('global AI controls', () => {
  it('a new business has the AI on and not paused', async () => {
    const tenant = await newTenant(['agent:write']);
    const res = await invoke('GET /agent/v1/status', { apiKey: tenant.apiKey });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ enabled: true, pausedUntil: null });
  });

  it.each(['POST /agent/v1/toggle', 'POST /agent/toggle'])('%s turns the AI off and on, and the status follows', async (route) => {
    // Prepare
    const tenant = await newTenant(['agent:write']);

    // Act
    const off = await invoke(route, { apiKey: tenant.apiKey, body: { enabled: false } });
    const statusOff = await invoke('GET /agent/v1/status', { apiKey: tenant.apiKey });
    const on = await invoke(route, { apiKey: tenant.apiKey, body: { enabled: true } });
    const statusOn = await invoke('GET /agent/v1/status', { apiKey: tenant.apiKey });

    // Assess
    expect(off.status).toBe(200);
    expect(off.body).toEqual({ success: true, enabled: false });
    expect(statusOff.body).toEqual({ enabled: false, pausedUntil: null });
    expect(on.body).toEqual({ success: true, enabled: true });
    expect(statusOn.body).toEqual({ enabled: true, pausedUntil: null });
  });

  it('refuses a toggle without a boolean enabled', async () => {
    const tenant = await newTenant(['agent:write']);
    const res = await invoke('POST /agent/v1/toggle', { apiKey: tenant.apiKey, body: { enabled: 'yes' } });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation_error');
  });

  it.each(['POST /agent/v1/pause', 'POST /agent/pause'])('%s pauses globally and the status shows the end', async (route) => {
    const tenant = await newTenant(['agent:write']);
    const res = await invoke(route, { apiKey: tenant.apiKey, body: { duration: 60 } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, pausedUntil: expect.any(String), message: expect.any(String) });
    expect(Math.round(minutesFromNow(res.body.pausedUntil))).toBe(60);
    const status = await invoke('GET /agent/v1/status', { apiKey: tenant.apiKey });
    expect(status.body).toEqual({ enabled: true, pausedUntil: res.body.pausedUntil });
  });

  it.each([[0], [1441], [-1], ['30'], [null], [undefined]])('answers Invalid duration for a global pause of %p', async (duration) => {
    const tenant = await newTenant(['agent:write']);
    const res = await invoke('POST /agent/v1/pause', { apiKey: tenant.apiKey, body: duration === undefined ? {} : { duration } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'Invalid duration', message: expect.stringContaining('1-1440 minutes') });
    expect((await invoke('GET /agent/v1/status', { apiKey: tenant.apiKey })).body.pausedUntil).toBeNull();
  });

  it('answers Invalid duration when the body is left out', async () => {
    const tenant = await newTenant(['agent:write']);
    const res = await invoke('POST /agent/pause', { apiKey: tenant.apiKey });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('Invalid duration');
  });

  it('requires agent:write for every global control', async () => {
    const tenant = await newTenant(['conversations:write']);
    const calls = await Promise.all([
      invoke('POST /agent/v1/pause', { apiKey: tenant.apiKey, body: { duration: 5 } }),
      invoke('POST /agent/toggle', { apiKey: tenant.apiKey, body: { enabled: false } }),
      invoke('GET /agent/v1/status', { apiKey: tenant.apiKey }),
      invoke('GET /agent/v1/settings', { apiKey: tenant.apiKey }),
    ]);
    expect(calls.map((c) => c.status)).toEqual([403, 403, 403, 403]);
  });

  it('keeps businesses apart', async () => {
    const a = await newTenant(['agent:write']);
    const b = await newTenant(['agent:write']);
    await invoke('POST /agent/v1/toggle', { apiKey: a.apiKey, body: { enabled: false } });
    expect((await invoke('GET /agent/v1/status', { apiKey: b.apiKey })).body.enabled).toBe(true);
  });
});

describe('agent settings', () => {
  it('shows the defaults, changes only the sent fields, and resets a field with null', async () => {
    // Prepare
    const tenant = await newTenant(['agent:write']);
    const before = await invoke('GET /agent/v1/settings', { apiKey: tenant.apiKey });

    const restore = overrideEnv({ AI_ALLOWED_MODELS: 'my-model' });

    // Act
    const patched = await invoke('PATCH /agent/v1/settings', { apiKey: tenant.apiKey, body: { systemPrompt: 'Answer like a pirate.', model: 'my-model', handoffPauseMinutes: 30 } });
    const reset = await invoke('PATCH /agent/v1/settings', { apiKey: tenant.apiKey, body: { model: null } });
    restore();

    // Assess
    expect(before.status).toBe(200);
    expect(before.body.settings).toMatchObject({ enabled: true, pausedUntil: null, handoffPauseMinutes: 0, systemPrompt: expect.any(String), model: expect.any(String) });
    expect(patched.status).toBe(200);
    expect(patched.body.settings).toMatchObject({ systemPrompt: 'Answer like a pirate.', model: 'my-model', handoffPauseMinutes: 30, enabled: true });
    expect(reset.body.settings).toMatchObject({ systemPrompt: 'Answer like a pirate.', model: before.body.settings.model, handoffPauseMinutes: 30 });
  });

  it('lets a business choose only the models the deployment allows: any other is 400 naming them, a withdrawn one falls back to the default', async () => {
    // Prepare: the deployment allows two models besides its default
    const tenant = await newTenant(['agent:write']);
    const restore = overrideEnv({ AI_ALLOWED_MODELS: 'model-a, model-b' });
    try {
      const defaultModel = (await invoke('GET /agent/v1/settings', { apiKey: tenant.apiKey })).body.settings.model;

      // Act
      const chosen = await invoke('PATCH /agent/v1/settings', { apiKey: tenant.apiKey, body: { model: 'model-b' } });
      const refused = await invoke('PATCH /agent/v1/settings', { apiKey: tenant.apiKey, body: { model: 'anthropic.claude-opus-4-v1:0' } });
      const afterRefusal = await invoke('GET /agent/v1/settings', { apiKey: tenant.apiKey });
      process.env.AI_ALLOWED_MODELS = 'model-a';
      const withdrawn = await invoke('GET /agent/v1/settings', { apiKey: tenant.apiKey });

      // Assess
      expect(chosen.status).toBe(200);
      expect(chosen.body.settings.model).toBe('model-b');
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ error: 'validation_error', details: { model: [expect.stringContaining(`${defaultModel}, model-a, model-b`)] } });
      expect(afterRefusal.body.settings.model).toBe('model-b');
      expect(withdrawn.body.settings.model).toBe(defaultModel);
    } finally {
      restore();
    }
  });

  it.each([
    ['an empty body', {}],
    ['an unknown field', { temperature: 2 }],
    ['a negative handoff pause', { handoffPauseMinutes: -1 }],
    ['an empty system prompt', { systemPrompt: '   ' }],
  ])('refuses %s with 400', async (_label, body) => {
    const tenant = await newTenant(['agent:write']);
    const res = await invoke('PATCH /agent/v1/settings', { apiKey: tenant.apiKey, body });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation_error');
  });

  it('the enabled setting is the global toggle', async () => {
    const tenant = await newTenant(['agent:write']);
    await invoke('PATCH /agent/v1/settings', { apiKey: tenant.apiKey, body: { enabled: false } });
    expect((await invoke('GET /agent/v1/status', { apiKey: tenant.apiKey })).body.enabled).toBe(false);
  });
});
