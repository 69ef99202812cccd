/**
 * The models a business may choose for its AI agent. The model runs on the operator's account (Bedrock through the
 * function's role, or the OpenAI-compatible provider's shared key), so the deployment names them: AI_ALLOWED_MODELS,
 * comma-separated (the CDK stack sets it from its `aiModels` and grants bedrock:InvokeModel on exactly those). The
 * deployment's default model (AI_MODEL, or the provider's default; locally the sandbox's) is always allowed.
 */
import { optionalEnv } from '#shared/settings/env.ts';
import { aiConfig } from './config.ts';

export const allowedModels = (): string[] => [
  ...new Set([aiConfig.model, ...(optionalEnv('AI_ALLOWED_MODELS') ?? '').split(',').map((m) => m.trim()).filter(Boolean)]),
];

export const isAllowedModel = (model: string): boolean => allowedModels().includes(model);

/** The model a business's agent runs: its choice while the deployment still allows it, else the default. */
export const effectiveModel = (chosen: string | null | undefined): string => (chosen && isAllowedModel(chosen) ? chosen : aiConfig.model);
