/**
 * The template an upstream payload sends, as the upstream error mapping names it: a 132000 answer says which
 * template and language the upstream did not find. Used by the first send and by a retry alike.
 */
export const templateContext = (payload: Record<string, unknown>): { templateName?: string; language?: string } => {
  const t = payload.template as { name?: string; language?: { code?: string } } | undefined;
  return t ? { templateName: t.name, language: t.language?.code } : {};
};
