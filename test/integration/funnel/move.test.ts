import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { invoke, newTenant } from '../../support/api.ts';
import { createApiKey } from '#shared/auth/api-keys.ts';
import { db, table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';
import { eventSink } from '../../support/queues.ts';

// The events these tests look for are the messages the SQS stand-in received.
const { eventsOf } = eventSink();

const queryPrefix = async (businessId: string, prefix: string) => {
  const pk = prefix === 'STAGE#' ? keys.stagePrefix(businessId).pk : `B#${businessId}`;
  const out = await db.send(new QueryCommand({ TableName: table(), KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)', ExpressionAttributeValues: { ':pk': pk, ':p': prefix }, ConsistentRead: true }));
  return out.Items ?? [];
};

async function setup() {
  const t = await newTenant();
  const stage = (name: string) => invoke('POST /funnel/v1/stages', { apiKey: t.apiKey, body: { name } }).then((r) => r.body.stage);
  const lead = await stage('Lead');
  const won = await stage('Won');
  const contact = (await invoke('POST /contacts/v1', { apiKey: t.apiKey, body: { phone_number: '+14155550601' } })).body.contact;
  return { t, lead, won, contact };
}

const move = (apiKey: string, id: string, stage_id: string | null | undefined) =>
  invoke('POST /funnel/v1/contacts/{id}/move', { apiKey, params: { id }, body: stage_id === undefined ? {} : { stage_id } });

describe('POST /funnel/v1/contacts/{id}/move', () => {
  it('moves from no stage to a stage, then to another, then out; counts follow and contact.stage_changed carries every field', async () => {
    // Prepare
    const { t, lead, won, contact } = await setup();

    // Act
    const first = await move(t.apiKey, contact.id, lead.id);
    const second = await move(t.apiKey, contact.id, won.id);
    const countsMid = (await invoke('GET /funnel/v1/stages', { apiKey: t.apiKey })).body.stages.map((s: any) => s.contact_count);
    const out = await move(t.apiKey, contact.id, null);

    // Assess
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ contact_id: contact.id, previous_stage: null, new_stage: { id: lead.id, name: 'Lead' }, moved_at: expect.any(String) });
    expect(second.body).toMatchObject({ previous_stage: { id: lead.id, name: 'Lead' }, new_stage: { id: won.id, name: 'Won' } });
    expect(countsMid).toEqual([0, 1]);
    expect(out.body).toMatchObject({ previous_stage: { id: won.id, name: 'Won' }, new_stage: null });
    const counts = (await invoke('GET /funnel/v1/stages', { apiKey: t.apiKey })).body.stages.map((s: any) => s.contact_count);
    expect(counts).toEqual([0, 0]);
    const events = eventsOf(t.businessId, 'contact.stage_changed').map((e) => e.data);
    expect(events[1]).toEqual({
      contact_id: contact.id,
      phone_number: '+14155550601',
      previous_stage_id: lead.id,
      previous_stage_name: 'Lead',
      new_stage_id: won.id,
      new_stage_name: 'Won',
      moved_at: second.body.moved_at,
    });
    expect(events).toHaveLength(3);
    expect((await invoke('GET /contacts/v1/{id}', { apiKey: t.apiKey, params: { id: contact.id } })).body.contact.funnel_stage_id).toBeNull();
  });

  it('answers separate 404s for an unknown contact and an unknown stage, and 400 without stage_id', async () => {
    const { t, lead, contact } = await setup();
    const unknown = '00000000-0000-4000-8000-000000000000';

    const noContact = await move(t.apiKey, unknown, lead.id);
    const noStage = await move(t.apiKey, contact.id, unknown);
    const missing = await move(t.apiKey, contact.id, undefined);

    expect(noContact.status).toBe(404);
    expect(noContact.body).toEqual({ error: 'not_found', message: 'Contact not found' });
    expect(noStage.status).toBe(404);
    expect(noStage.body).toEqual({ error: 'not_found', message: 'Funnel stage not found' });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toBe('validation_error');
    expect(missing.body.details.stage_id).toBeDefined();
  });

  it('keeps one stage per contact and exact counts under 60 concurrent moves', async () => {
    // Prepare: 3 stages, 10 contacts, keys enough for the per-key limit
    const t = await newTenant();
    const apiKeys = await Promise.all([0, 1, 2].map(() => createApiKey(t.businessId, ['funnels:write', 'funnels:read', 'contacts:write']).then((k) => k.apiKey)));
    const stages: any[] = [];
    for (const name of ['A', 'B', 'C']) stages.push((await invoke('POST /funnel/v1/stages', { apiKey: apiKeys[0], body: { name } })).body.stage);
    const contacts: any[] = [];
    for (let i = 0; i < 10; i++) contacts.push((await invoke('POST /contacts/v1', { apiKey: apiKeys[1], body: { phone_number: `+1415555070${i}` } })).body.contact);

    // Act: every contact moved 6 times at once to random stages (or none)
    const targets = [...stages.map((s) => s.id), null];
    const results = await Promise.all(Array.from({ length: 60 }, (_, i) =>
      move(apiKeys[i % 3], contacts[i % 10].id, targets[Math.floor(Math.random() * targets.length)])));

    // Assess: every move answered 200, or 409 conflict where its retries ran out of time (a starved machine: the answer
    // the README gives under heavy contention); each stage's counter equals the contacts that point at it in the table
    const refused = results.filter((r) => r.status !== 200);
    expect(refused.map((r) => [r.status, r.body.error])).toEqual(refused.map(() => [409, 'conflict']));
    expect(refused.length).toBeLessThan(results.length / 2);
    const contactItems = await queryPrefix(t.businessId, 'CONTACT#');
    const stageItems = await queryPrefix(t.businessId, 'STAGE#');
    for (const s of stageItems) {
      expect({ stage: s.name, count: s.contact_count }).toEqual({ stage: s.name, count: contactItems.filter((c) => c.funnel_stage_id === s.id).length });
    }
  });
});
