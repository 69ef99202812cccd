/**
 * Per-business access tokens (issue 18): a business with its own token (stored in Secrets Manager by the admin's
 * module) makes every upstream call with it — API sends, retries, AI agent replies, broadcast sends, template lists,
 * media upload and lookup — while a business without one uses the stack's token. The sandbox accepts only a number's
 * own token once it has one, and records the Authorization header of every Graph call. A rotated token is used at the
 * first 401. Neither token appears in an API response, a log line or a queue message.
 */
import { randomUUID } from 'node:crypto';
import { TEST_UPSTREAM } from '../../support/upstream-secret.ts';

// Service modules load inside the harness (after the sandbox is up); logging on, every line into `logLines`.
process.env.LOG_LEVEL = 'DEBUG';
const { startHarness, randomPhone } = await import('../messages/harness.ts');
const h = await startHarness();
afterAll(() => h.stop());

const { logger } = await import('#shared/log/logger.ts');
const logLines: string[] = [];
const sink = (line: string) => logLines.push(line);
(logger as any).console = { error: sink, warn: sink, info: sink, debug: sink, log: sink };
const { storeBusinessToken } = await import('#shared/secrets/business-token-store.ts');
const { uploadToUpstream, upstreamMediaInfo } = await import('#shared/media/upstream-media.ts');
const { sendAiText } = await import('#shared/ai/send-reply.ts');
const { sendTemplate } = await import('#shared/broadcasts/sender.ts');

const responses: unknown[] = [];
const send = async (apiKey: string, body: unknown) => {
  const res = await h.send(apiKey, body);
  responses.push(res);
  return res;
};
const newToken = () => `EAAG${randomUUID().replace(/-/g, '')}${randomUUID().replace(/-/g, '')}`;

/** A business with its own token, known to the sandbox (the only one its number accepts) and to Secrets Manager. */
async function tenantWithToken() {
  const tenant = await h.newTenant();
  const token = newToken();
  h.sandbox.state.tokens.set(tenant.phoneNumberId, token);
  await storeBusinessToken(tenant.businessId, token);
  return { ...tenant, token };
}

/** The Authorization headers of the Graph calls made since `from` for paths containing `part`. */
const authorizationsSince = (from: number, part: string) =>
  h.sandbox.state.requests.slice(from).filter((r: { path: string }) => r.path.includes(part)).map((r: { authorization?: string }) => r.authorization);

describe('per-business access tokens', () => {
  it('sends (API, retry, AI agent, broadcast), lists templates and calls media for each business with its own token; others use the stack token', async () => {
    // Prepare
    const a = await tenantWithToken();
    const b = await tenantWithToken();
    const c = await h.newTenant();
    const [toA, toB, toC] = [randomPhone(), randomPhone(), randomPhone()];
    await h.inbound(a.phoneNumberId, toA);
    await h.inbound(b.phoneNumberId, toB);
    await h.inbound(c.phoneNumberId, toC);
    const from = h.sandbox.state.requests.length;

    // Act: text sends of all three; of A a template send (after a transient fault), a retried send and an AI agent
    // reply; of B a broadcast's template send and the media calls.
    const texts = await Promise.all([[a, toA], [b, toB], [c, toC]].map(([t, to]: any) => send(t.apiKey, { to, content: 'Hola' })));
    await h.sandboxCall('POST', '/__sandbox/faults', { kind: 'error500', count: 1, target: 'messages' }); // a logged retry
    const template = await send(a.apiKey, { to: randomPhone(), type: 'template', templateName: 'hello_world', language: 'en_US' });
    await h.sandboxCall('POST', '/__sandbox/faults', { kind: 'error', code: 131000, target: 'messages' });
    const failed = await send(a.apiKey, { to: toA, content: 'again' });
    const retry = await h.invoke('POST /messages/v1/{id}/retry', { apiKey: a.apiKey, params: { id: failed.body.data.id } });
    responses.push(retry);
    const aiReply = await sendAiText(a.businessId, 'conversation', toA, 'Respuesta del agente');
    const broadcastTo = randomPhone();
    const broadcast = await sendTemplate(b.businessId, randomUUID(), { contact_id: randomUUID(), phone_number: broadcastTo }, { to: broadcastTo, type: 'template', templateName: 'hello_world', language: 'en_US' });
    const mediaId = await uploadToUpstream(b.businessId, b.phoneNumberId, Buffer.from('%PDF-1.4 test'), 'application/pdf', 'a.pdf');
    const info = await upstreamMediaInfo(b.businessId, b.phoneNumberId, mediaId);

    // Assess: every call succeeded, each with its business's token.
    expect(texts.map((r) => [r.status, r.status === 200 ? undefined : r.body])).toEqual([[200, undefined], [200, undefined], [200, undefined]]);
    expect(template.status).toBe(200);
    expect(failed.status).toBeGreaterThanOrEqual(400);
    expect(retry.status).toBe(200);
    expect(info?.id).toBe(mediaId);
    expect(aiReply.sent).toBe(true);
    expect(broadcast.wamid).toEqual(expect.any(String));
    expect(new Set(authorizationsSince(from, `/${a.phoneNumberId}/messages`))).toEqual(new Set([`Bearer ${a.token}`]));
    expect(authorizationsSince(from, `/${a.phoneNumberId}/messages`)).toHaveLength(6);
    expect(authorizationsSince(from, '/message_templates')).toContain(`Bearer ${a.token}`);
    expect(authorizationsSince(from, `/${b.phoneNumberId}/messages`)).toEqual([`Bearer ${b.token}`, `Bearer ${b.token}`]);
    expect(authorizationsSince(from, '/message_templates')).toContain(`Bearer ${b.token}`);
    expect(authorizationsSince(from, `/${b.phoneNumberId}/media`)).toEqual([`Bearer ${b.token}`]);
    expect(authorizationsSince(from, `/${mediaId}`)).toEqual([`Bearer ${b.token}`]);
    expect(authorizationsSince(from, `/${c.phoneNumberId}/messages`)).toEqual([`Bearer ${TEST_UPSTREAM.token}`]);

    // Assess: no token in any API response, log line or queue message.
    const queued = (['upstream-events', 'events', 'webhook-deliveries', 'media', 'ai', 'broadcasts'] as const).flatMap((q) => h.takeQueue(q));
    const seen = [JSON.stringify(responses), ...logLines, ...queued.map((m) => m.body)].join('\n');
    expect(logLines.some((line) => line.includes('transient upstream fault'))).toBe(true);
    expect(queued.length).toBeGreaterThan(0);
    for (const token of [a.token, b.token, TEST_UPSTREAM.token]) expect(seen).not.toContain(token);
  }, 90_000);

  it('uses a rotated token at once: the old one is refused (401), the new one is read and the send goes through', async () => {
    // Prepare: A has sent with its first token, so this container holds it.
    const a = await tenantWithToken();
    const to = randomPhone();
    await h.inbound(a.phoneNumberId, to);
    expect((await send(a.apiKey, { to, content: 'first' })).status).toBe(200);
    const rotated = newToken();
    h.sandbox.state.tokens.set(a.phoneNumberId, rotated);
    await storeBusinessToken(a.businessId, rotated);
    const from = h.sandbox.state.requests.length;

    // Act
    const res = await send(a.apiKey, { to, content: 'after rotation' });

    // Assess
    expect(res.status).toBe(200);
    expect(authorizationsSince(from, `/${a.phoneNumberId}/messages`)).toEqual([`Bearer ${a.token}`, `Bearer ${rotated}`]);
  });

  it('uses a token granted moments after a send was refused for the old one (a second later, not 30 s)', async () => {
    // Prepare: the upstream already holds a new token that Secrets Manager does not: a send is refused (190), and
    // its 401 re-read the secret; then the admin stores the new token.
    const a = await tenantWithToken();
    const to = randomPhone();
    await h.inbound(a.phoneNumberId, to);
    const granted = newToken();
    h.sandbox.state.tokens.set(a.phoneNumberId, granted);
    expect((await send(a.apiKey, { to, content: 'refused' })).body).toMatchObject({ code: '190' });
    await storeBusinessToken(a.businessId, granted);
    await new Promise((r) => setTimeout(r, 1_100));
    const from = h.sandbox.state.requests.length;

    // Act
    const res = await send(a.apiKey, { to, content: 'after the grant' });

    // Assess
    expect(res.status).toBe(200);
    expect(authorizationsSince(from, `/${a.phoneNumberId}/messages`)).toEqual([`Bearer ${a.token}`, `Bearer ${granted}`]);
  });
});
