/** Items of the webhook area as records: the table's key and bookkeeping attributes taken off. */
const KEY_ATTRS = ['pk', 'sk', 'gsi1pk', 'gsi1sk', 'type', 'ttl'];

export const fromTableItem = <T>(item: Record<string, unknown>): T => {
  const out = { ...item };
  for (const k of KEY_ATTRS) delete out[k];
  return out as T;
};
