/** Who is calling: the business and key an authenticated request acts for, with the key's scopes. */
import type { Scope } from './scopes.ts';

export interface AuthContext {
  businessId: string;
  keyId: string;
  scopes: Scope[];
}
