/**
 * The contact record as stored (item attributes besides pk/sk and the projection keys) and as returned
 * by the API. Owned by the contacts area; other areas read it and never write contact items themselves.
 */
export interface Contact {
  id: string;
  phone_number: string; // E.164, leading '+'
  name: string | null;
  email: string | null;
  tags: string[];
  custom_fields: Record<string, string | number | boolean | null>;
  assigned_agent_id: string | null;
  funnel_stage_id: string | null;
  /** How the contact came to be: 'api', 'bulk', 'inbound', 'outbound', 'import'. */
  origin: string;
  opted_out: boolean;
  created_at: string;
  updated_at: string;
  /** Last message in either direction (ISO 8601), or null. */
  last_contact_at: string | null;
  /** Set when soft-deleted; a deleted contact is in no list, count or segment. */
  deleted_at: string | null;
}
