import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { invoke, newTenant } from '../../support/api.ts';
import { db, table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';
import { eventSink } from '../../support/queues.ts';

// The events these tests look for are the messages the SQS stand-in received.
const { eventsOf } = eventSink();

describe('contacts CRUD', () => {
  it('creates a contact with a normalised phone, deduplicated tags, and emits contact.created', async () => {
    // Prepare
    const t = await newTenant();

    // Act
    const res = await invoke('POST /contacts/v1', {
      apiKey: t.apiKey,
      body: { phone_number: '+52 1 55 1234 5678', name: 'Ana', email: 'Ana@Example.com', tags: ['vip', 'VIP', 'lead'], custom_fields: { plan: 'pro', seats: 3 } },
    });

    // Assess
    expect(res.status).toBe(201);
    const c = res.body.contact;
    expect(c).toMatchObject({ phone_number: '+5215512345678', name: 'Ana', email: 'ana@example.com', tags: ['vip', 'lead'], custom_fields: { plan: 'pro', seats: 3 }, funnel_stage_id: null, assigned_agent_id: null, deleted_at: null });
    const got = await invoke('GET /contacts/v1/{id}', { apiKey: t.apiKey, params: { id: c.id.toUpperCase() } });
    expect(got.status).toBe(200);
    expect(got.body.contact).toEqual(c);
    const item = (await db.send(new GetCommand({ TableName: table(), Key: keys.contact(t.businessId, c.id) }))).Item!;
    expect(item.spk).toMatch(new RegExp(`^B#${t.businessId}#S\\d+$`));
    expect(typeof item.proj).toBe('string');
    expect(eventsOf(t.businessId, 'contact.created').map((e) => e.data.contact_id)).toEqual([c.id]);
  });

  it('answers 409 duplicate_contact with existing_contact_id for the same number written differently', async () => {
    const t = await newTenant();
    const first = await invoke('POST /contacts/v1', { apiKey: t.apiKey, body: { phone_number: '+14155550123' } });
    const res = await invoke('POST /contacts/v1', { apiKey: t.apiKey, body: { phone_number: '+1 (415) 555-0123' } });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: 'duplicate_contact', message: expect.any(String), existing_contact_id: first.body.contact.id });
  });

  it.each([
    [{ phone_number: 'not a phone' }, 'phone_number'],
    [{ phone_number: '+123' }, 'phone_number'],
    [{ phone_number: '14155550124' }, 'phone_number'], // the contract's international format has a leading +
    [{ phone_number: '0014155550124' }, 'phone_number'],
    [{ phone_number: '+14155550124', email: 'nope' }, 'email'],
    [{ phone_number: '+14155550124', tags: 'vip' }, 'tags'],
    [{ phone_number: '+14155550124', custom_fields: { nested: { a: 1 } } }, 'custom_fields.nested'],
    [{ phone_number: '+14155550124', custom_fields: [] }, 'custom_fields'],
    [{ phone_number: '+14155550124', assigned_agent_id: '00000000-0000-4000-8000-000000000000' }, 'assigned_agent_id'],
    [{}, 'phone_number'],
  ])('answers 400 validation_error for %j', async (body, field) => {
    const t = await newTenant();
    const res = await invoke('POST /contacts/v1', { apiKey: t.apiKey, body });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation_error');
    expect(Object.keys(res.body.details)).toContain(field);
  });

  it('patches only sent fields, merges custom fields and emits contact.updated with the changed fields', async () => {
    const t = await newTenant();
    const { body } = await invoke('POST /contacts/v1', { apiKey: t.apiKey, body: { phone_number: '+14155550125', name: 'Bo', tags: ['a'], custom_fields: { x: 1, y: 2 } } });
    const id = body.contact.id;

    const res = await invoke('PATCH /contacts/v1/{id}', { apiKey: t.apiKey, params: { id }, body: { add_tags: ['b', 'A'], custom_fields: { y: null, z: 'new' } } });

    expect(res.status).toBe(200);
    expect(res.body.contact).toMatchObject({ name: 'Bo', tags: ['a', 'b'], custom_fields: { x: 1, z: 'new' } });
    const updated = eventsOf(t.businessId, 'contact.updated');
    expect(updated).toHaveLength(1);
    expect(updated[0].data.changed_fields.sort()).toEqual(['custom_fields', 'tags']);
  });

  it('keeps a contact within 100 tags and 100 custom fields: a PATCH or bulk item that would add past them is refused, one at them or removing passes', async () => {
    // Prepare: a contact at both limits
    const t = await newTenant();
    const full = { tags: Array.from({ length: 100 }, (_, i) => `t${i}`), custom_fields: Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`k${i}`, i])) };
    const { body } = await invoke('POST /contacts/v1', { apiKey: t.apiKey, body: { phone_number: '+14155550129', ...full } });
    const id = body.contact.id;
    const patch = (change: object) => invoke('PATCH /contacts/v1/{id}', { apiKey: t.apiKey, params: { id }, body: change });

    // Act
    const moreTags = await patch({ add_tags: ['extra'] });
    const moreFields = await patch({ custom_fields: { extra: 1 } });
    const bulk = await invoke('POST /contacts/v1/bulk', { apiKey: t.apiKey, body: { operation: 'add_tags', contact_ids: [id], tags: ['extra'] } });
    const bulkUpdate = await invoke('POST /contacts/v1/bulk', { apiKey: t.apiKey, body: { operation: 'update', contacts: [{ id, custom_fields: { extra: 1 } }] } });
    const sameTags = await patch({ add_tags: ['T0'], custom_fields: { k0: 'changed' } });
    const swap = await patch({ remove_tags: ['t0'], add_tags: ['new'], custom_fields: { k1: null, fresh: 1 } });

    // Assess
    expect(moreTags.status).toBe(400);
    expect(moreTags.body).toMatchObject({ error: 'validation_error', details: { add_tags: [expect.stringContaining('101')] } });
    expect(moreFields.status).toBe(400);
    expect(moreFields.body).toMatchObject({ error: 'validation_error', details: { custom_fields: [expect.stringContaining('101')] } });
    expect(bulk.status).toBe(207);
    expect(bulk.body.results[0]).toMatchObject({ success: false, contact_id: id, error: 'add_tags_failed', message: expect.stringContaining('100 tags') });
    expect(bulkUpdate.status).toBe(207);
    expect(bulkUpdate.body.results[0]).toMatchObject({ success: false, contact_id: id, error: 'update_failed', message: expect.stringContaining('100 custom fields') });
    expect(sameTags.status).toBe(200);
    expect(swap.status).toBe(200);
    const stored = (await invoke('GET /contacts/v1/{id}', { apiKey: t.apiKey, params: { id } })).body.contact;
    expect(stored.tags).toHaveLength(100);
    expect(stored.tags).toContain('new');
    expect(Object.keys(stored.custom_fields)).toHaveLength(100);
    expect(stored.custom_fields).toMatchObject({ k0: 'changed', fresh: 1 });
  });

  it('keeps a contact within 32 KB of data: a create or a change past it is a 400 naming custom_fields (DynamoDB refused such items with a 500)', async () => {
    // Prepare
    const t = await newTenant();
    const emoji = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`f${i}`, '😀'.repeat(2000)]));
    const small = Object.fromEntries(Array.from({ length: 15 }, (_, i) => [`f${i}`, 'x'.repeat(2000)]));

    // Act
    const huge = await invoke('POST /contacts/v1', { apiKey: t.apiKey, body: { phone_number: '+14155550131', custom_fields: emoji } });
    const fits = await invoke('POST /contacts/v1', { apiKey: t.apiKey, body: { phone_number: '+14155550132', custom_fields: small } });
    const grow = await invoke('PATCH /contacts/v1/{id}', { apiKey: t.apiKey, params: { id: fits.body.contact.id }, body: { custom_fields: { g: 'x'.repeat(2000) }, add_tags: Array.from({ length: 20 }, (_, i) => `${i}`.padEnd(100, 't')) } });
    const shrink = await invoke('PATCH /contacts/v1/{id}', { apiKey: t.apiKey, params: { id: fits.body.contact.id }, body: { custom_fields: { f0: null } } });

    // Assess
    expect(huge.status).toBe(400);
    expect(huge.body).toMatchObject({ error: 'validation_error', details: { custom_fields: [expect.stringContaining('at most 32,768')] } });
    expect(await invoke('GET /contacts/v1', { apiKey: t.apiKey, query: { search: '4155550131' } })).toMatchObject({ body: { contacts: [] } });
    expect(fits.status).toBe(201);
    expect(grow.status).toBe(400);
    expect(grow.body.details.custom_fields[0]).toContain('at most 32,768');
    expect(shrink.status).toBe(200);
  });

  it('changes the phone number, frees the old one and refuses a taken one', async () => {
    const t = await newTenant();
    const a = (await invoke('POST /contacts/v1', { apiKey: t.apiKey, body: { phone_number: '+14155550126' } })).body.contact;
    const b = (await invoke('POST /contacts/v1', { apiKey: t.apiKey, body: { phone_number: '+14155550127' } })).body.contact;

    const taken = await invoke('PATCH /contacts/v1/{id}', { apiKey: t.apiKey, params: { id: a.id }, body: { phone_number: '+14155550127' } });
    const moved = await invoke('PATCH /contacts/v1/{id}', { apiKey: t.apiKey, params: { id: a.id }, body: { phone_number: '+14155550128' } });
    const reuse = await invoke('POST /contacts/v1', { apiKey: t.apiKey, body: { phone_number: '+14155550126' } });
    const national = await invoke('PATCH /contacts/v1/{id}', { apiKey: t.apiKey, params: { id: a.id }, body: { phone_number: '14155550129' } });

    expect(national.status).toBe(400);
    expect(national.body.details).toEqual({ phone_number: [expect.stringContaining('leading +')] });
    expect(taken.status).toBe(409);
    expect(taken.body.existing_contact_id).toBe(b.id);
    expect(moved.status).toBe(200);
    expect(moved.body.contact.phone_number).toBe('+14155550128');
    expect(reuse.status).toBe(201);
  });

  it('soft-deletes: 404 afterwards, out of the list, no projection, number free, contact.deleted emitted', async () => {
    const t = await newTenant();
    const c = (await invoke('POST /contacts/v1', { apiKey: t.apiKey, body: { phone_number: '+14155550129' } })).body.contact;

    const del = await invoke('DELETE /contacts/v1/{id}', { apiKey: t.apiKey, params: { id: c.id } });

    expect(del.status).toBe(200);
    expect(del.body).toEqual({ success: true, id: c.id });
    expect((await invoke('GET /contacts/v1/{id}', { apiKey: t.apiKey, params: { id: c.id } })).status).toBe(404);
    expect((await invoke('DELETE /contacts/v1/{id}', { apiKey: t.apiKey, params: { id: c.id } })).status).toBe(404);
    expect((await invoke('GET /contacts/v1', { apiKey: t.apiKey })).body.contacts).toEqual([]);
    const item = (await db.send(new GetCommand({ TableName: table(), Key: keys.contact(t.businessId, c.id) }))).Item!;
    expect(item.deleted_at).toEqual(expect.any(String));
    expect(item.spk).toBeUndefined();
    expect(item.proj).toBeUndefined();
    expect(eventsOf(t.businessId, 'contact.deleted')[0].data).toMatchObject({ contact_id: c.id, phone_number: '+14155550129' });
    expect((await invoke('POST /contacts/v1', { apiKey: t.apiKey, body: { phone_number: '+14155550129' } })).status).toBe(201);
  });

  it('answers 404 for unknown and malformed ids, 403 forbidden for another account\'s', async () => {
    const t = await newTenant();
    const other = await newTenant();
    const c = (await invoke('POST /contacts/v1', { apiKey: other.apiKey, body: { phone_number: '+14155550130' } })).body.contact;
    // The contract's Authentication section: 403 when "the resource belongs to another account".
    const foreign = await invoke('GET /contacts/v1/{id}', { apiKey: t.apiKey, params: { id: c.id } });
    expect(foreign.status).toBe(403);
    expect(foreign.body).toEqual({ error: 'forbidden', message: expect.any(String) });
    for (const id of ['not-a-uuid', '00000000-0000-4000-8000-000000000000']) {
      const res = await invoke('GET /contacts/v1/{id}', { apiKey: t.apiKey, params: { id } });
      expect(res.status).toBe(404);
      expect(res.body.error).toBe('not_found');
    }
  });
});

describe('GET /contacts/v1', () => {
  it('pages with next_cursor through every live contact exactly once', async () => {
    const t = await newTenant();
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await invoke('POST /contacts/v1', { apiKey: t.apiKey, body: { phone_number: `+1415555020${i}` } })).body.contact.id);

    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await invoke('GET /contacts/v1', { apiKey: t.apiKey, query: { limit: '3', ...(cursor ? { cursor } : {}) } });
      expect(res.status).toBe(200);
      seen.push(...res.body.contacts.map((c: any) => c.id));
      cursor = res.body.next_cursor ?? undefined;
      pages++;
    } while (cursor);

    expect(pages).toBe(3);
    expect(seen.sort()).toEqual(ids.sort());
  });

  it('searches name, email and phone, and applies filters', async () => {
    const t = await newTenant();
    const mk = (body: object) => invoke('POST /contacts/v1', { apiKey: t.apiKey, body }).then((r) => r.body.contact);
    const ana = await mk({ phone_number: '+14155550301', name: 'Ána López', tags: ['vip'] });
    const bo = await mk({ phone_number: '+14155550302', email: 'bo@shop.com', tags: ['lead'] });
    await mk({ phone_number: '+5215512340000', name: 'Carla' });

    const byName = await invoke('GET /contacts/v1', { apiKey: t.apiKey, query: { search: 'ana' } });
    const byEmail = await invoke('GET /contacts/v1', { apiKey: t.apiKey, query: { search: 'shop.com' } });
    const byPhone = await invoke('GET /contacts/v1', { apiKey: t.apiKey, query: { search: '415 555' } });
    const byTags = await invoke('GET /contacts/v1', { apiKey: t.apiKey, query: { filters: JSON.stringify({ tags: { any: ['vip', 'lead'] } }) } });
    const none = await invoke('GET /contacts/v1', { apiKey: t.apiKey, query: { filters: JSON.stringify({ tags: { none: ['vip'] } }), search: 'bo' } });

    expect(byName.body.contacts.map((c: any) => c.id)).toEqual([ana.id]);
    expect(byEmail.body.contacts.map((c: any) => c.id)).toEqual([bo.id]);
    expect(byPhone.body.contacts.map((c: any) => c.id).sort()).toEqual([ana.id, bo.id].sort());
    expect(byTags.body.contacts.map((c: any) => c.id).sort()).toEqual([ana.id, bo.id].sort());
    expect(none.body.contacts.map((c: any) => c.id)).toEqual([bo.id]);
  });

  it.each([
    ['not json', { filters: '{bad' }],
    ['unknown key', { filters: JSON.stringify({ colour: 'red' }) }],
    ['forged cursor', { cursor: Buffer.from(JSON.stringify({ pk: 'B#someone-else', sk: 'CONTACT#x' })).toString('base64url') }],
    ['limit too large', { limit: '1000' }],
  ])('answers 400 for %s', async (_label, query) => {
    const t = await newTenant();
    const res = await invoke('GET /contacts/v1', { apiKey: t.apiKey, query });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual(expect.any(String));
  });

  it('refuses segment_id in a search\'s filters with words about the search, not about segment rules', async () => {
    const t = await newTenant();
    const res = await invoke('GET /contacts/v1', { apiKey: t.apiKey, query: { filters: JSON.stringify({ segment_id: '11111111-2222-4333-8444-555555555555' }) } });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('segment_id is not allowed here');
    expect(res.body.message).not.toContain('segment rules');
  });
});

describe('contact invariants under concurrency', () => {
  it('creates one contact for one number under 50 concurrent creates', async () => {
    // Prepare: keys of their own, so the per-key limit does not shape the race.
    const t = await newTenant();
    const { createApiKey } = await import('#shared/auth/api-keys.ts');
    const apiKeys = await Promise.all([0, 1].map(() => createApiKey(t.businessId, ['contacts:write']).then((k) => k.apiKey)));

    // Act
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => invoke('POST /contacts/v1', { apiKey: apiKeys[i % 2], body: { phone_number: '+14155550400', name: `n${i}` } })),
    );

    // Assess: one 201, 49 409s naming it, and the table holds one contact and one claim
    const created = results.filter((r) => r.status === 201);
    expect(created).toHaveLength(1);
    const id = created[0].body.contact.id;
    expect(results.filter((r) => r.status === 409).every((r) => r.body.existing_contact_id === id)).toBe(true);
    expect(results.filter((r) => r.status !== 201 && r.status !== 409)).toEqual([]);
    const { pk, skPrefix } = keys.contactPrefix(t.businessId);
    const items = (await db.send(new QueryCommand({ TableName: table(), KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)', ExpressionAttributeValues: { ':pk': pk, ':p': skPrefix }, ConsistentRead: true }))).Items!;
    expect(items.map((i) => i.id)).toEqual([id]);
    const claim = (await db.send(new GetCommand({ TableName: table(), Key: keys.contactPhone(t.businessId, '+14155550400') }))).Item!;
    expect(claim.contactId).toBe(id);
  });
});
