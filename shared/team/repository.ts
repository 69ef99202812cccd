/**
 * Team agents. `assigned_conversations` is a counter kept exact by the conversation assignment code
 * (shared/conversations), which changes it in the same transaction as the assignment itself.
 */
import { randomUUID } from 'node:crypto';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';
import { queryPrefix } from '#shared/store/query.ts';

export type AgentRole = 'super_admin' | 'admin' | 'agent';

export interface TeamAgent {
  id: string;
  name: string | null;
  email: string;
  role: AgentRole;
  is_available: boolean;
  assigned_conversations: number;
}

export async function addAgent(businessId: string, input: { email: string; name?: string | null; role?: AgentRole; available?: boolean }): Promise<TeamAgent> {
  const agent: TeamAgent = {
    id: randomUUID(),
    name: input.name ?? null,
    email: input.email,
    role: input.role ?? 'agent',
    is_available: input.available ?? true,
    assigned_conversations: 0,
  };
  await db.send(new PutCommand({ TableName: table(), Item: { ...keys.agent(businessId, agent.id), type: 'agent', businessId, ...agent } }));
  return agent;
}

export async function getAgent(businessId: string, agentId: string): Promise<TeamAgent | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: table(), Key: keys.agent(businessId, agentId) }));
  return Item ? toAgent(Item) : undefined;
}

export async function listAgents(businessId: string): Promise<TeamAgent[]> {
  const { pk, skPrefix } = keys.agentPrefix(businessId);
  return (await queryPrefix(pk, skPrefix)).map(toAgent);
}

const toAgent = (item: Record<string, any>): TeamAgent => ({
  id: item.id,
  name: item.name ?? null,
  email: item.email,
  role: item.role,
  is_available: Boolean(item.is_available),
  assigned_conversations: Math.max(0, Number(item.assigned_conversations ?? 0)),
});
