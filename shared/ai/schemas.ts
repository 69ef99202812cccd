/** Request shapes of the AI controls (a pause's duration rule, which a send's `ai` object shares, is in duration.ts). */
import * as v from 'valibot';
import { maxCharacters } from '#shared/lang/characters.ts';
import { AI_MODES } from './conversation-ai.ts';
import { allowedModels, isAllowedModel } from './models.ts';
import { DEFAULT_PAUSE_MINUTES, durationMinutes, MAX_PAUSE_MINUTES } from './duration.ts';

/** PATCH /conversations/v1/{id}/ai */
export const conversationToggleBody = v.object({
  aiEnabled: v.boolean('aiEnabled is required and must be a boolean'),
  aiMode: v.optional(v.picklist(AI_MODES, `aiMode must be one of: ${AI_MODES.join(', ')}`)),
});

/** POST /conversations/v1/{id}/ai/pause (the body may be left out: 5 minutes). */
export const conversationPauseBody = v.optional(
  v.object({ duration: v.optional(durationMinutes(), DEFAULT_PAUSE_MINUTES) }),
  { duration: DEFAULT_PAUSE_MINUTES },
);

/** POST /agent/v1/pause: duration is required. */
export const globalPauseBody = v.object({ duration: durationMinutes() });

/** POST /agent/v1/toggle and /agent/toggle. */
export const globalToggleBody = v.object({ enabled: v.boolean('enabled is required and must be a boolean') });

/** PATCH /agent/v1/settings: only sent fields change; null resets a text field to the default. */
export const settingsPatchBody = v.pipe(
  v.strictObject({
    enabled: v.optional(v.boolean('enabled must be a boolean')),
    systemPrompt: v.optional(v.nullable(v.pipe(v.string('systemPrompt must be a string'), v.trim(), v.minLength(1, 'systemPrompt must not be empty'), maxCharacters(4000, 'systemPrompt is limited to 4000 characters')))),
    model: v.optional(v.nullable(v.pipe(v.string('model must be a string'), v.trim(), v.minLength(1, 'model must not be empty'), v.check(isAllowedModel, () => `model must be one of the models this deployment allows: ${allowedModels().join(', ')}`)))),
    handoffPauseMinutes: v.optional(v.pipe(v.number('handoffPauseMinutes must be a number'), v.integer('handoffPauseMinutes must be a whole number'), v.minValue(0, 'handoffPauseMinutes must be between 0 and 1440'), v.maxValue(MAX_PAUSE_MINUTES, 'handoffPauseMinutes must be between 0 and 1440'))),
    debounceSeconds: v.optional(v.pipe(v.number('debounceSeconds must be a number'), v.integer('debounceSeconds must be a whole number'), v.minValue(0, 'debounceSeconds must be between 0 and 60'), v.maxValue(60, 'debounceSeconds must be between 0 and 60'))),
  }),
  v.check((body) => Object.keys(body).length > 0, 'send at least one setting'),
);
