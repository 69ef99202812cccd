/**
 * The business-wide AI settings item (`keys.aiSettings`): the global toggle and pause of the contract plus
 * the agent's per-business configuration. A business that never touched them gets the defaults below.
 */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';
import { aiConfig } from './config.ts';

export interface AiSettings {
  /** Global on/off (the contract's global toggle). */
  enabled: boolean;
  /** End of the global timed pause (ISO 8601) or null. */
  pausedUntil: string | null;
  /** Instructions for the model; null uses the service default. */
  systemPrompt: string | null;
  /** Model id for this business; null uses the deployment's default (AI_MODEL). */
  model: string | null;
  /** Minutes the AI stays paused in a conversation after a human reply through the API; 0 turns handoff off. */
  handoffPauseMinutes: number;
  /** Inbound messages arriving within this many seconds get one answer; 0 answers each at once. */
  debounceSeconds: number;
  updatedAt: string | null;
}

export type AiSettingsPatch = Partial<Omit<AiSettings, 'updatedAt'>>;

export const defaultSettings = (): AiSettings => ({
  enabled: true,
  pausedUntil: null,
  systemPrompt: null,
  model: null,
  handoffPauseMinutes: aiConfig.handoffPauseMinutes,
  debounceSeconds: aiConfig.debounceSeconds,
  updatedAt: null,
});

const FIELDS = ['enabled', 'pausedUntil', 'systemPrompt', 'model', 'handoffPauseMinutes', 'debounceSeconds', 'updatedAt'] as const;

/** The settings a stored item (or none) stands for: the defaults under whatever the business set. */
export const aiSettingsFromItem = (item: Record<string, unknown> | undefined): AiSettings => {
  const settings = defaultSettings();
  if (!item) return settings;
  for (const f of FIELDS) if (item[f] !== undefined) (settings as any)[f] = item[f];
  return settings;
};

export async function getAiSettings(businessId: string): Promise<AiSettings> {
  const { Item } = await db.send(new GetCommand({ TableName: table(), Key: keys.aiSettings(businessId) }));
  return aiSettingsFromItem(Item);
}

/** Sets the given fields (creating the item on first use) and returns the whole settings. */
export async function updateAiSettings(businessId: string, patch: AiSettingsPatch, now = new Date()): Promise<AiSettings> {
  const values: Record<string, unknown> = { ...patch, updatedAt: now.toISOString() };
  const entries = Object.entries(values).filter(([, v]) => v !== undefined);
  const { Attributes } = await db.send(new UpdateCommand({
    TableName: table(),
    Key: keys.aiSettings(businessId),
    UpdateExpression: `SET #type = :type, ${entries.map(([k]) => `#${k} = :${k}`).join(', ')}`,
    ExpressionAttributeNames: { '#type': 'type', ...Object.fromEntries(entries.map(([k]) => [`#${k}`, k])) },
    ExpressionAttributeValues: { ':type': 'aiSettings', ...Object.fromEntries(entries.map(([k, v]) => [`:${k}`, v])) },
    ReturnValues: 'ALL_NEW',
  }));
  return aiSettingsFromItem(Attributes);
}
