/** The agent settings as the API shows them: stored values, or the deployment's defaults where none is set. */
import { aiConfig, DEFAULT_SYSTEM_PROMPT } from './config.ts';
import { effectiveModel } from './models.ts';
import { activePause } from './precedence.ts';
import { getAiSettings, updateAiSettings, type AiSettings, type AiSettingsPatch } from './settings.ts';

const view = (s: AiSettings, now: Date) => ({
  enabled: s.enabled,
  pausedUntil: activePause(s.pausedUntil, now),
  systemPrompt: s.systemPrompt ?? DEFAULT_SYSTEM_PROMPT,
  model: effectiveModel(s.model),
  provider: aiConfig.provider,
  handoffPauseMinutes: s.handoffPauseMinutes,
  debounceSeconds: s.debounceSeconds,
  updatedAt: s.updatedAt,
});

export const agentSettings = async (businessId: string, now = new Date()) => view(await getAiSettings(businessId), now);

export const updateAgentSettings = async (businessId: string, patch: AiSettingsPatch, now = new Date()) =>
  view(await updateAiSettings(businessId, patch, now), now);
