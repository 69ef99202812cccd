/**
 * Invariants under concurrency: at least 50 simultaneous requests per invariant (CONCURRENCY; 200 under STRESS),
 * each checked in the table itself afterwards, not only in the answers.
 * - stage positions stay a permutation 0..n-1 under concurrent creates and reorders; the 50-stage limit holds;
 * - a contact is in one stage at a time and every stage's contact_count matches its contacts;
 * - a phone number is unique per business (one 201, the rest 409 with the winner's id);
 * - member changes are idempotent (the affected counts add up to the real change);
 * - the rate limiter never admits more than the limit, and every 429 carries the contract's body and headers;
 * - a message's status never moves backwards under concurrent status webhooks, and each move emits one event;
 * - simultaneous retries of one failed message put it in front of the customer once (counted at the sandbox).
 */
import { randomUUID } from 'node:crypto';
import { startHarness, randomPhone, type Harness } from '../messages/harness.ts';

// Room for the invariants themselves; the bulk class keeps a small limit for the rate-limit invariant.
process.env.LIMIT_REQUESTS_PER_MINUTE = '1000000';
process.env.LIMIT_MESSAGES_PER_MINUTE = '1000000';
process.env.LIMIT_BULK_PER_MINUTE = '10';

const N = process.env.STRESS ? 200 : 50;
/**
 * One funnel is one contended partition (every reorder conflicts with every other). On DynamoDB Local on a busy
 * machine, 100+ simultaneous reorders of one funnel outlive the 10 s handler budget (middy then answers 500), so
 * the funnel runs stay at 50 unless FUNNEL_CONCURRENCY says otherwise.
 */
const FUNNEL_N = Number(process.env.FUNNEL_CONCURRENCY ?? 50);
let h: Harness;
let db: typeof import('#shared/store/client.ts');
let lib: typeof import('@aws-sdk/lib-dynamodb');
let runs = 0;
let requests = 0;

beforeAll(async () => {
  h = await startHarness();
  db = await import('#shared/store/client.ts');
  lib = await import('@aws-sdk/lib-dynamodb');
}, 30_000);
afterAll(async () => {
  await h?.stop();
  console.log(`hardening: concurrency: ${runs} invariants held under ${requests} simultaneous requests (${N} per run, ${FUNNEL_N} on one funnel)`);
});

const all = async <T>(n: number, f: (i: number) => Promise<T>): Promise<T[]> => {
  requests += n;
  return Promise.all(Array.from({ length: n }, (_, i) => f(i)));
};

const queryAll = async (pk: string, skPrefix?: string) => {
  const items: Record<string, any>[] = [];
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const page = await db.db.send(new lib.QueryCommand({
      TableName: db.table(),
      KeyConditionExpression: skPrefix ? 'pk = :pk AND begins_with(sk, :sk)' : 'pk = :pk',
      ExpressionAttributeValues: skPrefix ? { ':pk': pk, ':sk': skPrefix } : { ':pk': pk },
      ExclusiveStartKey,
    }));
    items.push(...(page.Items ?? []));
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  return items;
};

const shuffle = <T>(list: T[]): T[] => {
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
};

/** 5xx answers, short, for a readable failure. */
const serverErrors = (res: { status: number; body: any }[]) => [...new Set(res.filter((r) => r.status >= 500).map((r) => `${r.status} ${JSON.stringify(r.body).slice(0, 200)}`))];

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

/**
 * A stage's position is derived, not stored: its index in the stages sorted by (rank, id). The invariant, in the
 * table and in the answers: the listing's positions are 0..n-1, in the table's (rank, id) order, and each stage's
 * own GET agrees with the listing.
 */
const checkPositions = async (apiKey: string, businessId: string) => {
  const stored = (await queryAll(`B#${businessId}#FUNNEL`, 'STAGE#'))
    .sort((x, y) => Number(x.rank) - Number(y.rank) || (x.id < y.id ? -1 : 1)).map((s) => s.id);
  const listed = (await h.invoke('GET /funnel/v1/stages', { apiKey })).body.stages as { id: string; position: number }[];
  expect(listed.map((s) => s.position)).toEqual(range(stored.length));
  expect(listed.map((s) => s.id)).toEqual(stored);
  const singles = await Promise.all(listed.map((s) => h.invoke('GET /funnel/v1/stages/{id}', { apiKey, params: { id: s.id } })));
  expect(singles.map((r) => r.body.stage.position)).toEqual(range(stored.length));
  return stored;
};

describe('funnel stages', () => {
  it('keeps the 50-stage limit and positions 0..49 under concurrent creates', async () => {
    // Prepare
    const t = await h.newTenant();

    // Act: more creates than the limit, all at once.
    const res = await all(Math.max(FUNNEL_N, 60), (i) => h.invoke('POST /funnel/v1/stages', { apiKey: t.apiKey, body: { name: `S${i}` } }));

    // Assess: never more than 50; the others refused with the limit error (or 409 conflict: too much contention,
    // retry); topping up one by one ends at exactly 50; the table agrees.
    const created = res.filter((r) => r.status === 201);
    expect(serverErrors(res)).toEqual([]);
    expect(created.length).toBeLessThanOrEqual(50);
    expect(res.filter((r) => r.status !== 201).every((r) => (r.status === 400 && r.body.error === 'stage_limit_reached') || (r.status === 409 && r.body.error === 'conflict'))).toBe(true);
    if (res.every((r) => r.status !== 409)) expect(created).toHaveLength(50);
    for (let i = created.length; i < 50; i++) expect((await h.invoke('POST /funnel/v1/stages', { apiKey: t.apiKey, body: { name: `top ${i}` } })).status).toBe(201);
    expect((await h.invoke('POST /funnel/v1/stages', { apiKey: t.apiKey, body: { name: 'one too many' } })).body.error).toBe('stage_limit_reached');
    expect(await checkPositions(t.apiKey, t.businessId)).toHaveLength(50);
    expect(await queryAll(`B#${t.businessId}#FUNNEL`, 'FSLOT#')).toHaveLength(50);
    runs++;
  }, 60_000);

  it('keeps positions a permutation under concurrent reorders mixed with creates', async () => {
    // Prepare: 10 stages.
    const t = await h.newTenant();
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push((await h.invoke('POST /funnel/v1/stages', { apiKey: t.apiKey, body: { name: `S${i}` } })).body.stage.id);

    // Act: N reorders of random permutations, and 5 creates, at the same time.
    const orders = range(FUNNEL_N).map(() => shuffle(ids));
    const res = await all(FUNNEL_N + 5, (i) => i < FUNNEL_N
      ? h.invoke('PATCH /funnel/v1/stages/reorder', { apiKey: t.apiKey, body: { stage_ids: orders[i] } })
      : h.invoke('POST /funnel/v1/stages', { apiKey: t.apiKey, body: { name: `late ${i}` } }));

    // Assess
    expect(serverErrors(res)).toEqual([]);
    expect(res.slice(0, FUNNEL_N).every((r) => r.status === 200 || r.status === 409)).toBe(true);
    const order = await checkPositions(t.apiKey, t.businessId);
    expect(order).toHaveLength(10 + res.slice(FUNNEL_N).filter((r) => r.status === 201).length);
    runs++;
  }, 60_000);

  // Two reorders that read the same funnel must not merge into an order nobody asked for (each rank write is
  // conditioned on the rank read; the loser retries on the new funnel).
  it('applies concurrent reorders whole: the funnel ends in one of the requested orders, never a mix', async () => {
    // Prepare: 10 stages; every transaction waits a little, so that both reorders read the funnel before either writes.
    const t = await h.newTenant();
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push((await h.invoke('POST /funnel/v1/stages', { apiKey: t.apiKey, body: { name: `S${i}` } })).body.stage.id);
    const reversed = [...ids].reverse();
    const firstTwoSwapped = [ids[1]!, ids[0]!, ...ids.slice(2)];
    const { dynamo } = await import('#shared/store/client.ts');
    const name = `hardening-delay-${randomUUID()}`;
    dynamo.middlewareStack.add((next) => async (args: any) => {
      if (args.input?.TransactItems) await new Promise((r) => setTimeout(r, 300));
      return next(args);
    }, { step: 'initialize', name });

    // Act
    try {
      const res = await all(2, (i) => h.invoke('PATCH /funnel/v1/stages/reorder', { apiKey: t.apiKey, body: { stage_ids: i ? firstTwoSwapped : reversed } }));
      expect(res.map((r) => r.status)).toEqual([200, 200]);
    } finally {
      dynamo.middlewareStack.remove(name);
    }

    // Assess
    const order = await checkPositions(t.apiKey, t.businessId);
    expect([reversed.join(), firstTwoSwapped.join()]).toContain(order.join());
    runs++;
  }, 60_000);

  it('keeps one stage per contact and exact contact counts under concurrent moves', async () => {
    // Prepare: 5 stages and 10 contacts.
    const t = await h.newTenant();
    const stageIds: string[] = [];
    for (let i = 0; i < 5; i++) stageIds.push((await h.invoke('POST /funnel/v1/stages', { apiKey: t.apiKey, body: { name: `S${i}` } })).body.stage.id);
    const contactIds: string[] = [];
    for (let i = 0; i < 10; i++) contactIds.push((await h.invoke('POST /contacts/v1', { apiKey: t.apiKey, body: { phone_number: randomPhone() } })).body.contact.id);

    // Act: N moves at once, several per contact, to random stages (or out of the funnel).
    const res = await all(FUNNEL_N, (i) => h.invoke('POST /funnel/v1/contacts/{id}/move', {
      apiKey: t.apiKey,
      params: { id: contactIds[i % contactIds.length]! },
      body: { stage_id: i % 7 === 0 ? null : stageIds[Math.floor(Math.random() * stageIds.length)] },
    }));

    // Assess: every contact item names one stage (or none); each stage's counter is the number of its contacts.
    expect(serverErrors(res)).toEqual([]);
    expect(res.every((r) => r.status === 200 || r.status === 409)).toBe(true);
    const contacts = await queryAll(`B#${t.businessId}`, 'CONTACT#');
    const stages = await queryAll(`B#${t.businessId}#FUNNEL`, 'STAGE#');
    for (const stage of stages) {
      expect({ stage: stage.id, count: stage.contact_count ?? stage.contactCount ?? 0 }).toEqual({ stage: stage.id, count: contacts.filter((c) => c.funnel_stage_id === stage.id).length });
    }
    const listed = (await h.invoke('GET /funnel/v1/stages', { apiKey: t.apiKey })).body.stages;
    expect(listed.reduce((n: number, s: any) => n + s.contact_count, 0)).toBe(contacts.filter((c) => c.funnel_stage_id).length);
    runs++;
  }, 60_000);
});

describe('contacts', () => {
  it('keeps a phone number unique per business under concurrent creates', async () => {
    // Prepare
    const t = await h.newTenant();
    const phone = randomPhone();

    // Act
    const res = await all(N, (i) => h.invoke('POST /contacts/v1', { apiKey: t.apiKey, body: { phone_number: phone, name: `Dup ${i}` } }));

    // Assess: one winner; every other answer is 409 duplicate_contact naming it; one contact and one phone item stored.
    expect(serverErrors(res)).toEqual([]);
    const won = res.filter((r) => r.status === 201);
    expect(won).toHaveLength(1);
    const winner = won[0]!.body.contact.id;
    expect(res.filter((r) => r.status !== 201).every((r) => r.status === 409 && r.body.error === 'duplicate_contact' && r.body.existing_contact_id === winner)).toBe(true);
    const items = await queryAll(`B#${t.businessId}`, 'C');
    expect(items.filter((i) => String(i.sk).startsWith('CONTACT#')).map((i) => i.id)).toEqual([winner]);
    expect(items.filter((i) => String(i.sk).startsWith('CPHONE#'))).toHaveLength(1);
    runs++;
  }, 60_000);
});

describe('segments', () => {
  it('makes concurrent member adds and removes idempotent: affected counts add up to the real change', async () => {
    // Prepare: a static segment and 10 contacts.
    const t = await h.newTenant();
    const contactIds: string[] = [];
    for (let i = 0; i < 10; i++) contactIds.push((await h.invoke('POST /contacts/v1', { apiKey: t.apiKey, body: { phone_number: randomPhone() } })).body.contact.id);
    const segment = (await h.invoke('POST /segments', { apiKey: t.apiKey, body: { name: 'Static', type: 'static' } })).body.data.id;
    const members = async () => (await queryAll(`B#${t.businessId}#SEG#${segment}`, 'C#')).map((m) => String(m.sk).slice(2)).sort();

    // Act: N adds of overlapping halves at once.
    const adds = await all(N, (i) => h.invoke('POST /segments/{id}/members', {
      apiKey: t.apiKey, params: { id: segment }, body: { action: 'add', contactIds: i % 2 ? contactIds : contactIds.slice(0, 5) },
    }));

    // Assess: 10 members in the table, and the answers claim exactly 10 changes between them.
    expect(adds.filter((r) => r.status !== 200)).toEqual([]);
    expect(adds.reduce((n, r) => n + r.body.data.affected, 0)).toBe(10);
    expect(await members()).toEqual([...contactIds].sort());
    expect((await h.invoke('GET /segments/{id}', { apiKey: t.apiKey, params: { id: segment } })).body.data.contactCount).toBe(10);

    // Act: N removes at once.
    const removes = await all(N, () => h.invoke('POST /segments/{id}/members', { apiKey: t.apiKey, params: { id: segment }, body: { action: 'remove', contactIds } }));

    // Assess
    expect(removes.filter((r) => r.status !== 200)).toEqual([]);
    expect(removes.reduce((n, r) => n + r.body.data.affected, 0)).toBe(10);
    expect(await members()).toEqual([]);
    runs++;
  }, 60_000);
});

describe('rate limits', () => {
  it('never admits more than the limit to simultaneous requests; every 429 carries the contract body and headers', async () => {
    // Prepare: a fresh key, and not too close to the end of the minute window (the limit is per minute).
    const t = await h.newTenant();
    const secondsLeft = 60 - (Math.floor(Date.now() / 1000) % 60);
    if (secondsLeft < 6) await new Promise((r) => setTimeout(r, secondsLeft * 1000 + 200));

    // Act: N bulk requests (limit 10 per minute) at once.
    const res = await all(N, () => h.invoke('POST /contacts/v1/bulk', { apiKey: t.apiKey, body: { operation: 'add_tags', contact_ids: [randomUUID()], tags: ['x'] } }));

    // Assess: exactly 10 admitted; every refusal is the contract's 429; the counter item says 10.
    const limited = res.filter((r) => r.status === 429);
    expect(res.filter((r) => r.status !== 429)).toHaveLength(10);
    expect(limited).toHaveLength(N - 10);
    for (const r of limited) {
      expect(r.body).toEqual({ error: 'rate_limited', message: expect.any(String), retry_after: expect.any(Number) });
      expect(r.body.retry_after).toBeGreaterThanOrEqual(1);
      expect(r.body.retry_after).toBeLessThanOrEqual(60);
      expect(r.headers).toMatchObject({ 'retry-after': String(r.body.retry_after), 'x-ratelimit-limit': '10', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': expect.stringMatching(/^\d+$/) });
    }
    const windowStart = Math.floor(Number(limited[0]!.headers['x-ratelimit-reset']) - 60);
    const counter = await db.db.send(new lib.GetCommand({ TableName: db.table(), Key: { pk: `RL#${t.keyId}#bulk#${windowStart}`, sk: 'RL' } }));
    expect(counter.Item?.count).toBe(10);
    runs++;
  }, 60_000);
});

describe('message status', () => {
  it('never moves a status backwards under concurrent status webhooks, and emits each move once', async () => {
    // Prepare: a sent message.
    const t = await h.newTenant();
    const to = randomPhone();
    const sent = await h.send(t.apiKey, { to, type: 'template', templateName: 'hello_world', language: 'en_US' });
    expect(sent.status).toBe(200);
    const wamid = sent.body.messages[0].wamid;
    h.events(t.businessId);

    // Act: N status webhooks (sent, delivered, read, shuffled) delivered by the sandbox, then all processed at once.
    const statuses = shuffle(range(N).map((i) => ['sent', 'delivered', 'read'][i % 3]!));
    await Promise.all(statuses.map((status) => h.status(wamid, status)));
    const bodies = h.takeUpstreamEvents();
    expect(bodies).toHaveLength(N);
    requests += N;
    const failures = await Promise.all(bodies.map((b) => h.runWorker([b])));

    // Assess: read in the table, and exactly one delivered and one read event (or only read, if read won first).
    expect(failures.reduce((n, f) => n + f, 0)).toBe(0);
    const message = await db.db.send(new lib.GetCommand({ TableName: db.table(), Key: { pk: `B#${t.businessId}`, sk: `MSG#${sent.body.data.id}` } }));
    expect(message.Item?.status).toBe('read');
    const events = h.events(t.businessId).filter((e) => e.data?.message_id === sent.body.data.id).map((e) => e.event);
    expect(events.filter((e) => e === 'message.read')).toHaveLength(1);
    expect(events.filter((e) => e === 'message.delivered').length).toBeLessThanOrEqual(1);

    // A late "delivered" after "read" changes nothing.
    await h.status(wamid, 'delivered');
    expect(await h.drain()).toBe(0);
    expect((await h.invoke('GET /messages/v1/{id}', { apiKey: t.apiKey, params: { id: sent.body.data.id } })).body.message.status).toBe('read');
    runs++;
  }, 60_000);
});

describe('message retry', () => {
  it('sends a failed message once under N simultaneous retries: one claim wins, the rest answer invalid_state', async () => {
    // Prepare: a text outside the 24-hour window fails (131047); then the customer writes, so a retry can succeed.
    const t = await h.newTenant();
    const to = randomPhone();
    const failed = await h.send(t.apiKey, { to, content: 'una sola vez' });
    expect(failed.status).toBe(400);
    const id = failed.body.data.id;
    await h.inbound(t.phoneNumberId, to);
    expect(await h.drain()).toBe(0);
    const before = (await h.sent(to)).filter((p) => p.text?.body === 'una sola vez').length;
    h.events(t.businessId);

    // Act
    const res = await Promise.all(range(N).map(() => h.invoke('POST /messages/v1/{id}/retry', { apiKey: t.apiKey, params: { id } })));
    requests += N;

    // Assess: counted at the upstream, in the table and in the events, not only in the answers. On a loaded
    // machine a request may outlive the handler's time budget (503, its work carries on): never a second send.
    const settled = async () => {
      for (let i = 0; i < 100; i++) {
        const { Item } = await db.db.send(new lib.GetCommand({ TableName: db.table(), Key: { pk: `B#${t.businessId}`, sk: `MSG#${id}` }, ConsistentRead: true }));
        if (Item?.status !== 'queued') return Item;
        await new Promise((r) => setTimeout(r, 200));
      }
      throw new Error('the retry never settled');
    };
    const stored = await settled();
    expect((await h.sent(to)).filter((p) => p.text?.body === 'una sola vez').length - before).toBe(1);
    const ok = res.filter((r) => r.status === 200);
    expect(ok.length).toBeLessThanOrEqual(1);
    for (const r of res.filter((x) => x.status !== 200)) {
      if (r.status === 503) expect(r.body).toEqual({ error: 'service_unavailable', message: expect.any(String) });
      else expect({ status: r.status, body: r.body }).toMatchObject({ status: 400, body: { error: 'invalid_state', message: expect.any(String), data: { id } } });
    }
    expect(res.filter((r) => r.status === 400).length).toBeGreaterThanOrEqual(N / 2);
    expect(stored).toMatchObject({ status: 'sent', retryCount: 1, wamid: expect.stringMatching(/^wamid\./) });
    if (ok.length === 1) expect(stored!.wamid).toBe(ok[0].body.data.messageId);
    expect(h.events(t.businessId).filter((e) => e.event === 'message.sent' && e.data?.message_id === id)).toHaveLength(1);
    runs++;
  }, 120_000);
});
