/** Every scope a key may carry: the contract's, plus those decisions.md adds. `--scopes all` grants them all. */
export const SCOPES = [
  'messages:write',
  'messages:read',
  'conversations:read',
  'conversations:write',
  'contacts:read',
  'contacts:write',
  'funnels:read',
  'funnels:write',
  'agent:write',
  'team:read',
  'webhooks:write',
] as const;

export type Scope = (typeof SCOPES)[number];

export const isScope = (s: string): s is Scope => (SCOPES as readonly string[]).includes(s);
