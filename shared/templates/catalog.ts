/**
 * The business's approved templates, read from the upstream template list (`GET /{waba-id}/message_templates`)
 * and cached per WABA for a few minutes, so that placeholder counts and quick-reply button ids can be checked
 * before sending. A name the cache does not know triggers one refresh (a template approved a minute ago).
 */
import { listTemplates, type UpstreamTemplate } from '#shared/upstream/client.ts';
import { logger } from '#shared/log/logger.ts';

const TTL_MS = 5 * 60 * 1000;
const cache = new Map<string, { at: number; templates: UpstreamTemplate[] }>();

async function load(businessId: string, wabaId: string, force: boolean): Promise<UpstreamTemplate[] | undefined> {
  const hit = cache.get(wabaId);
  if (hit && !force && Date.now() - hit.at < TTL_MS) return hit.templates;
  try {
    const templates = await listTemplates(businessId, wabaId);
    cache.set(wabaId, { at: Date.now(), templates });
    return templates;
  } catch (err) {
    // Without the list the checks are skipped and the upstream remains the judge.
    logger.warn('template list unavailable', { wabaId, error: err as Error });
    return hit?.templates;
  }
}

/** Approved templates of this name (any language); `undefined` when the list cannot be read. */
export async function templatesNamed(businessId: string, wabaId: string, name: string): Promise<UpstreamTemplate[] | undefined> {
  let list = await load(businessId, wabaId, false);
  let named = list?.filter((t) => t.name === name && (t.status ?? 'APPROVED').toUpperCase() === 'APPROVED');
  if (list && named?.length === 0 && Date.now() - (cache.get(wabaId)?.at ?? 0) > 5_000) {
    list = await load(businessId, wabaId, true);
    named = list?.filter((t) => t.name === name && (t.status ?? 'APPROVED').toUpperCase() === 'APPROVED');
  }
  return list ? named : undefined;
}

/** Distinct `{{1}}` / `{{name}}` placeholders of a component text. */
export const placeholders = (text: unknown): number =>
  typeof text === 'string' ? new Set(text.match(/\{\{\s*\w+\s*\}\}/g)?.map((p) => p.replace(/\s/g, '')) ?? []).size : 0;

export const clearTemplateCache = () => cache.clear();
