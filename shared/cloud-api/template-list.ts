/**
 * `GET /{version}/{waba_id}/message_templates` as Graph answers it: the business's templates narrowed by Graph's
 * filters (`name` or part of it, `content`, `name_or_content`, and the lists `status`, `category`, `language`,
 * `quality_score`), paged by `limit` with `after`/`before` cursors (and `paging.next`/`previous` URLs, which pywa
 * follows, when the request names its address), projected to `fields` (with `id`), and the `summary` fields asked for
 * beside them (`total_count`, `message_template_count`, `message_template_limit`, `are_translations_complete`: pywa
 * reads all four).
 */
import * as v from 'valibot';
import type { UpstreamTemplate } from '#shared/upstream/client.ts';
import { validationError } from '#shared/http/errors.ts';
import { ownValue } from '#shared/lang/client-keys.ts';

/** Graph's default page of templates, and the largest it takes. */
const DEFAULT_LIMIT = 25;
const MAX_LIMIT = 1000;

const list = (value: string | undefined) => value?.split(',').map((s) => s.trim().toUpperCase()).filter(Boolean);

export const templateListQuery = v.looseObject({
  name: v.optional(v.string()),
  status: v.optional(v.string()),
  category: v.optional(v.string()),
  language: v.optional(v.string()),
  name_or_content: v.optional(v.string()),
  content: v.optional(v.string()),
  quality_score: v.optional(v.string()),
  fields: v.optional(v.string()),
  summary: v.optional(v.string()),
  limit: v.optional(v.pipe(v.string(), v.regex(/^\d+$/, 'limit must be a whole number'), v.transform(Number), v.minValue(1, 'limit must be at least 1'), v.maxValue(MAX_LIMIT, `limit must be at most ${MAX_LIMIT}`))),
  after: v.optional(v.string()),
  before: v.optional(v.string()),
});
export type TemplateListQuery = v.InferOutput<typeof templateListQuery>;

const cursorOf = (index: number) => Buffer.from(`i:${index}`).toString('base64url');
function indexOf(cursor: string, name: string, size: number): number {
  const m = /^i:(\d+)$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m || Number(m[1]) > size) throw validationError({ [name]: ['is not a cursor of this list'] }, `Invalid cursor: ${name}`);
  return Number(m[1]);
}

/** Every text of a template's components (its body, header, footer and buttons), for `name_or_content`. */
const textsOf = (t: UpstreamTemplate): string[] =>
  t.components.flatMap((c) => [c.text, ...(Array.isArray(c.buttons) ? c.buttons.map((b: Record<string, unknown>) => b.text) : [])]).filter((x): x is string => typeof x === 'string');

/** The request's own URL with other query parameters (`pageUrl`), to link the pages before and after. */
export type PageUrl = (query: Record<string, string>) => string;

/** Meta's cap on a WhatsApp Business Account's templates (of a business not yet verified). */
const MESSAGE_TEMPLATE_LIMIT = 250;

const contains = (text: string, part: string | undefined) => part === undefined || text.toLowerCase().includes(part.toLowerCase());
const among = (values: string[] | undefined, value: unknown) => !values?.length || values.includes(String(value ?? '').toUpperCase());

/** Whether every template name is in every language any template has. */
function translationsComplete(templates: UpstreamTemplate[]): boolean {
  const languages = new Set(templates.map((t) => t.language));
  const byName = new Map<string, Set<string>>();
  for (const t of templates) byName.set(t.name, (byName.get(t.name) ?? new Set()).add(t.language));
  return [...byName.values()].every((have) => have.size === languages.size);
}

export function selectTemplates(templates: UpstreamTemplate[], q: TemplateListQuery, pageUrl?: PageUrl) {
  const [statuses, categories, languages, qualities] = [q.status, q.category, q.language, q.quality_score].map(list);
  const matching = templates.filter((t) =>
    contains(t.name, q.name)
    && among(statuses, t.status)
    && among(categories, t.category)
    && among(languages, t.language)
    && among(qualities, (t as { quality_score?: { score?: unknown } }).quality_score?.score)
    && (q.content === undefined || textsOf(t).some((text) => contains(text, q.content)))
    && (q.name_or_content === undefined || contains(t.name, q.name_or_content) || textsOf(t).some((text) => contains(text, q.name_or_content))));

  const limit = q.limit ?? DEFAULT_LIMIT;
  const end = q.before !== undefined ? indexOf(q.before, 'before', matching.length) : undefined;
  const start = q.after !== undefined ? indexOf(q.after, 'after', matching.length) : end !== undefined ? Math.max(0, end - limit) : 0;
  const pageEnd = Math.min(end ?? matching.length, start + limit);
  const page = matching.slice(start, pageEnd);

  const fields = q.fields?.split(',').map((f) => f.trim()).filter(Boolean);
  const data = fields?.length
    ? page.map((t) => Object.fromEntries([['id', t.id], ...fields.map((f) => [f, ownValue(t as unknown as Record<string, unknown>, f)])].filter(([, value]) => value !== undefined)))
    : page;
  const cursors = page.length ? { before: cursorOf(start), after: cursorOf(pageEnd) } : {};
  const { after: _after, before: _before, ...rest } = q as Record<string, unknown>;
  const link = (cursor: Record<string, string>) => pageUrl!({ ...(Object.fromEntries(Object.entries(rest).map(([k, val]) => [k, String(val)]))), ...cursor });
  const links = pageUrl && page.length
    ? { ...(pageEnd < matching.length ? { next: link({ after: cursors.after! }) } : {}), ...(start > 0 ? { previous: link({ before: cursors.before! }) } : {}) }
    : {};
  const asked = new Set(q.summary?.split(',').map((s) => s.trim()));
  const totals = {
    ...(asked.has('total_count') ? { total_count: matching.length } : {}),
    ...(asked.has('message_template_count') ? { message_template_count: templates.length } : {}),
    ...(asked.has('message_template_limit') ? { message_template_limit: MESSAGE_TEMPLATE_LIMIT } : {}),
    ...(asked.has('are_translations_complete') ? { are_translations_complete: translationsComplete(templates) } : {}),
  };
  return { data, paging: { cursors, ...links }, ...(Object.keys(totals).length ? { summary: totals } : {}) };
}
