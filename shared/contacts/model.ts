/**
 * The contact record as stored (item attributes besides pk/sk and the projection keys) and as returned
 * by the API. Owned by the contacts area; other areas read it and never write contact items themselves.
 */
export interface Contact {
  id: string;
  /** E.164, leading '+'; null only for a customer who wrote by username and never shared a number (see whatsapp_user_id). */
  phone_number: string | null;
  /**
   * The customer's WhatsApp business-scoped user id (`from_user_id` / `contacts[].user_id` of the Cloud API's
   * webhooks): present only on a contact that was met by username without a phone number.
   */
  whatsapp_user_id?: string;
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
