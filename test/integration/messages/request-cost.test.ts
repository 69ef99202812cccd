/**
 * What one send costs in DynamoDB, counted at the table client for the request alone (an AsyncLocalStorage
 * context around the handler invocation): a text to a contact and conversation that already exist makes at
 * most 7 requests, at most 3 of them in sequence before the upstream call. First contact with a new number and a
 * retry are held to their own stated maxima.
 */
import { startHarness, randomPhone, type Harness } from './harness.ts';
import { countCalls, mark, measure, sequentialRounds, type Call } from '../../support/dynamo-calls.ts';
import { observeHttpRequests } from '../../support/outbound-http.ts';

process.env.LIMIT_REQUESTS_PER_MINUTE = '1000000';
process.env.LIMIT_MESSAGES_PER_MINUTE = '1000000';

let h: Harness;
let stopObserving: (() => void) | undefined;

beforeAll(async () => {
  h = await startHarness();
  const { dynamo } = await import('#shared/store/client.ts');
  countCalls(dynamo);
  // The upstream call's start, to count the round trips before it.
  stopObserving = observeHttpRequests((url) => {
    if (url.startsWith(h.sandbox.url) && url.endsWith('/messages')) mark('upstream');
  });
});
afterAll(async () => {
  stopObserving?.();
  await h?.stop();
});

const cost = (calls: Call[], marks: Record<string, number>) => ({
  requests: calls.length,
  beforeUpstream: sequentialRounds(calls, marks.upstream ?? Infinity),
  commands: calls.map((c) => c.command),
});

describe('DynamoDB requests of a send', () => {
  it('a text to an existing contact and conversation: at most 7 requests, at most 3 in sequence before the upstream call', async () => {
    // Prepare: the customer wrote in (contact, conversation and the 24-hour window exist).
    const { t, to } = await h.openChat();

    // Act
    const { result, calls, marks } = await measure(() => h.send(t.apiKey, { to, content: 'cuánto cuesta' }));

    // Assess: sent, upstream called once, and the request's own calls within the budget.
    expect(result.status).toBe(200);
    expect(marks.upstream).toBeDefined();
    const c = cost(calls, marks);
    console.log(`send to a known number: ${c.requests} requests, ${c.beforeUpstream} in sequence before the upstream (${c.commands.join(', ')})`);
    expect(c.requests).toBeLessThanOrEqual(7);
    expect(c.beforeUpstream).toBeLessThanOrEqual(3);
  });

  it("reads the request's API key strongly consistent: a key revoked a moment ago is not read as it was (DynamoDB's default read may be)", async () => {
    const { t, to } = await h.openChat();
    const { calls } = await measure(() => h.send(t.apiKey, { to, content: 'hola' }));
    const keyReads = calls.filter((c) => c.command === 'GetItemCommand' && String(c.input.Key?.pk?.S ?? c.input.Key?.pk).startsWith('APIKEY'));
    expect(keyReads).toHaveLength(1);
    expect(keyReads[0].input.ConsistentRead).toBe(true);
  });

  it('first contact with a new number costs more, within its own maximum of 11 requests and 8 in sequence', async () => {
    const t = await h.newTenant();
    const to = randomPhone();
    const { result, calls, marks } = await measure(() => h.send(t.apiKey, { to, type: 'template', templateName: 'hello_world', language: 'en_US' }));
    expect(result.status).toBe(200);
    const c = cost(calls, marks);
    console.log(`send to a new number: ${c.requests} requests, ${c.beforeUpstream} in sequence before the upstream (${c.commands.join(', ')})`);
    expect(c.requests).toBeLessThanOrEqual(11);
    expect(c.beforeUpstream).toBeLessThanOrEqual(8);

    // The next send to that number takes the fast path.
    const next = await measure(() => h.send(t.apiKey, { to, type: 'template', templateName: 'hello_world', language: 'en_US' }));
    expect(next.result.status).toBe(200);
    expect(cost(next.calls, next.marks).requests).toBeLessThanOrEqual(7);
  });

  it('a retry: at most 7 requests, at most 3 in sequence before the upstream call', async () => {
    const t = await h.newTenant();
    const to = randomPhone();
    const failed = await h.send(t.apiKey, { to, content: 'fuera de ventana' });
    expect(failed.status).toBe(400);
    await h.inbound(t.phoneNumberId, to);
    await h.drain();

    const { result, calls, marks } = await measure(() => h.invoke('POST /messages/v1/{id}/retry', { apiKey: t.apiKey, params: { id: failed.body.data.id } }));
    expect(result.status).toBe(200);
    const c = cost(calls, marks);
    console.log(`retry: ${c.requests} requests, ${c.beforeUpstream} in sequence before the upstream (${c.commands.join(', ')})`);
    expect(c.requests).toBeLessThanOrEqual(7);
    expect(c.beforeUpstream).toBeLessThanOrEqual(3);
  });
});
