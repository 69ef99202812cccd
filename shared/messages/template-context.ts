/** The template name and language of an upstream payload, for the delivery errors of sends and retries. */
export const templateContext = (payload: Record<string, unknown>): { templateName?: string; language?: string } => {
  const t = payload.template as { name?: string; language?: { code?: string } } | undefined;
  return t ? { templateName: t.name, language: t.language?.code } : {};
};
