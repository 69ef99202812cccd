import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { invoke, newTenant } from '../../support/api.ts';
import { createApiKey } from '#shared/auth/api-keys.ts';
import { addAgent } from '#shared/team/repository.ts';
import { findOrCreateConversation } from '#shared/conversations/repository.ts';
import { getContact } from '#shared/contacts/repository.ts';
import { db, table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';
import { eventSink } from '../../support/queues.ts';

// The events these tests look for are the messages the SQS stand-in received.
const { eventsOf } = eventSink();

const conversationAgent = async (businessId: string, conversationId: string) =>
  (await db.send(new GetCommand({ TableName: table(), Key: keys.conversation(businessId, conversationId), ConsistentRead: true }))).Item!.assignedAgentId ?? null;

const counters = async (apiKey: string) =>
  Object.fromEntries((await invoke('GET /team/v1', { apiKey })).body.agents.map((a: any) => [a.email, a.assigned_conversations]));

describe('agent assignment through contacts', () => {
  it('assigns, reassigns and unassigns the open conversation with exact counters and events', async () => {
    // Prepare: a contact with an open conversation, two agents
    const t = await newTenant();
    const ana = await addAgent(t.businessId, { email: 'ana@x.com' });
    const bo = await addAgent(t.businessId, { email: 'bo@x.com' });
    const contact = (await invoke('POST /contacts/v1', { apiKey: t.apiKey, body: { phone_number: '+14155550801' } })).body.contact;
    const { conversation } = await findOrCreateConversation(t.businessId, (await getContact(t.businessId, contact.id))!);
    const patch = (assigned_agent_id: string | null) => invoke('PATCH /contacts/v1/{id}', { apiKey: t.apiKey, params: { id: contact.id }, body: { assigned_agent_id } });

    // Act + Assess, step by step
    expect((await patch(ana.id)).body.contact.assigned_agent_id).toBe(ana.id);
    expect(await conversationAgent(t.businessId, conversation.id)).toBe(ana.id);
    expect(await counters(t.apiKey)).toEqual({ 'ana@x.com': 1, 'bo@x.com': 0 });

    await patch(bo.id);
    expect(await conversationAgent(t.businessId, conversation.id)).toBe(bo.id);
    expect(await counters(t.apiKey)).toEqual({ 'ana@x.com': 0, 'bo@x.com': 1 });

    await patch(null);
    expect(await conversationAgent(t.businessId, conversation.id)).toBeNull();
    expect(await counters(t.apiKey)).toEqual({ 'ana@x.com': 0, 'bo@x.com': 0 });

    const assigned = eventsOf(t.businessId, 'conversation.assigned').map((e) => e.data);
    expect(assigned).toEqual([
      expect.objectContaining({ conversation_id: conversation.id, contact_id: contact.id, agent_id: ana.id, previous_agent_id: null }),
      expect.objectContaining({ conversation_id: conversation.id, agent_id: bo.id, previous_agent_id: ana.id }),
    ]);
    expect(eventsOf(t.businessId, 'conversation.unassigned').map((e) => e.data)).toEqual([
      expect.objectContaining({ conversation_id: conversation.id, contact_id: contact.id, agent_id: null, previous_agent_id: bo.id }),
    ]);
  });

  it("closes the open conversation when the contact's number changes: the next one is with the new number, and the agent holds only it", async () => {
    // Prepare: a contact with an agent and an open conversation with its number
    const t = await newTenant();
    const ana = await addAgent(t.businessId, { email: 'ana@x.com' });
    const contact = (await invoke('POST /contacts/v1', { apiKey: t.apiKey, body: { phone_number: '+14155550811', assigned_agent_id: ana.id } })).body.contact;
    const { conversation } = await findOrCreateConversation(t.businessId, (await getContact(t.businessId, contact.id))!);
    // The customer wrote from the old number a minute ago: its 24-hour window is open.
    const wroteAt = new Date(Date.now() - 60_000).toISOString();
    await db.send(new UpdateCommand({ TableName: table(), Key: keys.conversation(t.businessId, conversation.id), UpdateExpression: 'SET lastInboundAt = :at', ExpressionAttributeValues: { ':at': wroteAt } }));

    // Act
    const renumbered = await invoke('PATCH /contacts/v1/{id}', { apiKey: t.apiKey, params: { id: contact.id }, body: { phone_number: '+14155550812' } });
    const renamed = await invoke('PATCH /contacts/v1/{id}', { apiKey: t.apiKey, params: { id: contact.id }, body: { name: 'Ana' } });
    const next = await findOrCreateConversation(t.businessId, (await getContact(t.businessId, contact.id))!);

    // Assess
    expect([renumbered.status, renamed.status]).toEqual([200, 200]);
    const old = (await invoke('GET /conversations/v1/{id}', { apiKey: t.apiKey, params: { id: conversation.id } })).body;
    expect(JSON.stringify(old)).toContain('"closed"');
    expect(eventsOf(t.businessId, 'conversation.closed').map((e) => e.data.conversation_id)).toEqual([conversation.id]);
    expect(next).toMatchObject({ created: true, conversation: { phoneNumber: '+14155550812', assignedAgentId: ana.id } });
    // The old number's window is not the new number's: nobody wrote from it.
    const opened = (await invoke('GET /conversations/v1/{id}', { apiKey: t.apiKey, params: { id: next.conversation.id } })).body;
    expect(JSON.stringify(opened)).toContain('"windowOpen":false');
    expect(await counters(t.apiKey)).toEqual({ 'ana@x.com': 1 });
  });

  it('opens no conversation for a contact deleted after it was read (the delete closed what it found; one opened after would stay)', async () => {
    // Prepare: a contact with an agent, read, then deleted
    const t = await newTenant();
    const ana = await addAgent(t.businessId, { email: 'ana@x.com' });
    const contact = (await invoke('POST /contacts/v1', { apiKey: t.apiKey, body: { phone_number: '+14155550821', assigned_agent_id: ana.id } })).body.contact;
    const read = (await getContact(t.businessId, contact.id))!;
    expect((await invoke('DELETE /contacts/v1/{id}', { apiKey: t.apiKey, params: { id: contact.id } })).status).toBe(200);

    // Act
    const opened = findOrCreateConversation(t.businessId, read);

    // Assess
    await expect(opened).rejects.toMatchObject({ name: 'ContactGone' });
    expect((await invoke('GET /conversations/v1', { apiKey: t.apiKey })).body.conversations).toEqual([]);
    expect(await counters(t.apiKey)).toEqual({ 'ana@x.com': 0 });
    expect(eventsOf(t.businessId, 'conversation.created')).toEqual([]);
  });

  it('keeps the counts exact when a close races an assignment: the close names the agent it took the conversation from', async () => {
    // Prepare: 24 contacts, each with an open unassigned conversation, and one agent
    const t = await newTenant();
    const ana = await addAgent(t.businessId, { email: 'ana@x.com' });
    const pairs = await Promise.all(Array.from({ length: 24 }, async (_, i) => {
      const contact = (await invoke('POST /contacts/v1', { apiKey: t.apiKey, body: { phone_number: `+1415555${String(1100 + i)}` } })).body.contact;
      const { conversation } = await findOrCreateConversation(t.businessId, (await getContact(t.businessId, contact.id))!);
      return { contact, conversation };
    }));

    // Act: each conversation's assignment and close at the same time
    const answers = await Promise.all(pairs.flatMap(({ contact, conversation }) => [
      invoke('PATCH /contacts/v1/{id}', { apiKey: t.apiKey, params: { id: contact.id }, body: { assigned_agent_id: ana.id } }),
      invoke('POST /conversations/v1/{id}/close', { apiKey: t.apiKey, params: { id: conversation.id } }),
    ]));

    // Assess: every conversation closed; the agent holds none of them, and each close names the agent it had
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    expect(await counters(t.apiKey)).toEqual({ 'ana@x.com': 0 });
    const closed = new Map(eventsOf(t.businessId, 'conversation.closed').map((e) => [e.data.conversation_id, e.data.assigned_agent_id]));
    const assignedBeforeClose = new Set(eventsOf(t.businessId, 'conversation.assigned').map((e) => e.data.conversation_id));
    for (const { conversation } of pairs) {
      const stored = (await db.send(new GetCommand({ TableName: table(), Key: keys.conversation(t.businessId, conversation.id), ConsistentRead: true }))).Item!;
      expect(stored.status).toBe('closed');
      expect(closed.get(conversation.id)).toBe(stored.assignedAgentId ?? null);
      expect(closed.get(conversation.id) === ana.id).toBe(assignedBeforeClose.has(conversation.id));
    }
  });

  it('assigns future conversations of a contact created with an agent', async () => {
    const t = await newTenant();
    const ana = await addAgent(t.businessId, { email: 'ana@x.com' });
    const contact = (await invoke('POST /contacts/v1', { apiKey: t.apiKey, body: { phone_number: '+14155550802', assigned_agent_id: ana.id } })).body.contact;

    const { conversation } = await findOrCreateConversation(t.businessId, (await getContact(t.businessId, contact.id))!);

    expect(contact.assigned_agent_id).toBe(ana.id);
    expect(conversation.assignedAgentId).toBe(ana.id);
    expect(await counters(t.apiKey)).toEqual({ 'ana@x.com': 1 });
  });

  it('gives a conversation opened from a contact read before its reassignment the new agent (the reassignment had none to move)', async () => {
    // Prepare: the contact as an inbound message read it (agent Ana), then reassigned to Bo while no conversation is open
    const t = await newTenant();
    const ana = await addAgent(t.businessId, { email: 'ana@x.com' });
    const bo = await addAgent(t.businessId, { email: 'bo@x.com' });
    const contact = (await invoke('POST /contacts/v1', { apiKey: t.apiKey, body: { phone_number: '+14155550803', assigned_agent_id: ana.id } })).body.contact;
    const readBefore = (await getContact(t.businessId, contact.id))!;
    expect((await invoke('PATCH /contacts/v1/{id}', { apiKey: t.apiKey, params: { id: contact.id }, body: { assigned_agent_id: bo.id } })).status).toBe(200);

    // Act
    const { conversation } = await findOrCreateConversation(t.businessId, readBefore);

    // Assess
    expect(conversation.assignedAgentId).toBe(bo.id);
    expect(await conversationAgent(t.businessId, conversation.id)).toBe(bo.id);
    expect(await counters(t.apiKey)).toEqual({ 'ana@x.com': 0, 'bo@x.com': 1 });
  });

  it('answers 400 for an agent of another business', async () => {
    const t = await newTenant();
    const other = await newTenant();
    const theirs = await addAgent(other.businessId, { email: 'them@x.com' });
    const contact = (await invoke('POST /contacts/v1', { apiKey: t.apiKey, body: { phone_number: '+14155550803' } })).body.contact;

    const res = await invoke('PATCH /contacts/v1/{id}', { apiKey: t.apiKey, params: { id: contact.id }, body: { assigned_agent_id: theirs.id } });

    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation_error');
    expect(res.body.details.assigned_agent_id).toBeDefined();
  });

  it('keeps assigned_conversations exact under 50 concurrent reassignments of 25 contacts', async () => {
    // Prepare: 25 contacts with open conversations, 3 agents
    const t = await newTenant();
    const apiKeys = await Promise.all([0, 1].map(() => createApiKey(t.businessId, ['contacts:write']).then((k) => k.apiKey)));
    const agents = await Promise.all(['a', 'b', 'c'].map((n) => addAgent(t.businessId, { email: `${n}@x.com` })));
    const contacts: string[] = [];
    for (let i = 0; i < 25; i++) {
      const c = (await invoke('POST /contacts/v1', { apiKey: t.apiKey, body: { phone_number: `+141555509${String(i).padStart(2, '0')}` } })).body.contact;
      await findOrCreateConversation(t.businessId, (await getContact(t.businessId, c.id))!);
      contacts.push(c.id);
    }

    // Act
    const choices = [...agents.map((a) => a.id), null];
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) =>
      invoke('PATCH /contacts/v1/{id}', { apiKey: apiKeys[i % 2], params: { id: contacts[i % 25] }, body: { assigned_agent_id: choices[Math.floor(Math.random() * choices.length)] } })));

    // Assess: each agent's counter equals the conversations the table assigns to it, and each contact agrees with its conversation
    expect(results.filter((r) => r.status !== 200).map((r) => r.body)).toEqual([]);
    const convs = (await db.send(new QueryCommand({ TableName: table(), KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)', ExpressionAttributeValues: { ':pk': `B#${t.businessId}`, ':p': 'CONV#' }, ConsistentRead: true }))).Items!;
    expect(convs).toHaveLength(25);
    for (const a of agents) {
      const item = (await db.send(new GetCommand({ TableName: table(), Key: keys.agent(t.businessId, a.id), ConsistentRead: true }))).Item!;
      expect({ agent: a.email, count: Number(item.assigned_conversations ?? 0) }).toEqual({ agent: a.email, count: convs.filter((c) => c.assignedAgentId === a.id).length });
    }
    for (const conv of convs) {
      expect((await getContact(t.businessId, conv.contactId))!.assigned_agent_id).toBe(conv.assignedAgentId ?? null);
    }
  }, 60_000);
});
