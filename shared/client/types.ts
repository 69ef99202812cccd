/**
 * The contract's request and response shapes (service-interface.md and decisions.md), for the typed client.
 * Fields the contract leaves open are typed loosely (`Record<string, unknown>`) rather than guessed.
 */
export type MediaType = 'image' | 'video' | 'audio' | 'document' | 'sticker';
export type MessageType = 'text' | MediaType | 'template' | 'interactive' | 'location' | 'contacts' | 'reaction';

/** AI control on send. */
export interface SendAi {
  pause?: boolean;
  /** minutes, default 5, at most 1440 */
  pauseDuration?: number;
  /** disable the AI permanently in this conversation */
  disable?: boolean;
}

export interface MediaObject {
  link?: string;
  id?: string;
  caption?: string;
  filename?: string;
}

export interface TemplateComponent {
  type: 'header' | 'body' | 'button';
  sub_type?: 'quick_reply' | 'url' | 'catalog';
  index?: string;
  parameters?: Record<string, unknown>[];
}

interface SendCommon {
  to: string;
  ai?: SendAi;
  /** media only: compress or send as a document when over the limit (default false: 413) */
  autoConvert?: boolean;
  messaging_product?: 'whatsapp';
}

/** Every style of `POST /messages/v1`: service shortcuts and the upstream (Cloud API) style. */
export type SendMessageRequest =
  | (SendCommon & { type?: 'text'; content: string })
  | (SendCommon & { type?: 'text'; text: { body: string; preview_url?: boolean } })
  | (SendCommon & { type: MediaType } & Partial<Record<MediaType, MediaObject>>)
  | (SendCommon & {
      type: 'template';
      templateName: string;
      template_parameters?: string[];
      language?: string;
      header_media?: { type: 'image' | 'video' | 'document'; url?: string; media_id?: string };
      allowButtonIdOverride?: boolean;
    })
  | (SendCommon & { type: 'template'; template: { name: string; language: { code: string; policy?: 'deterministic' }; components?: TemplateComponent[] }; allowButtonIdOverride?: boolean })
  | (SendCommon & { type: 'location'; location: { latitude: number; longitude: number; name?: string; address?: string } })
  | (SendCommon & { type: 'reaction'; reaction: { message_id: string; emoji: string } })
  | (SendCommon & { type: 'interactive'; interactive: Record<string, unknown> })
  | (SendCommon & { type: 'contacts'; contacts: Record<string, unknown>[] });

export interface SendResult {
  messaging_product: 'whatsapp';
  contacts: { input: string; wa_id: string }[];
  messages: { id: string; wamid: string }[];
  data: {
    id: string;
    conversationId: string;
    messageType: string;
    direction: 'outbound';
    status: 'sent' | 'delivered' | 'read' | 'failed' | 'queued';
    createdAt: string;
    metadata?: { originalType: string; wasConverted: boolean; reason: string };
  };
}

export interface RetryResult {
  message: string;
  data: { id: string; messageId: string; status: string; retriedAt: string };
}

export interface UploadedMedia {
  media_id: string;
  mime_type: string;
  file_size: number;
  type: MediaType;
}

export interface FunnelStage {
  id: string;
  name: string;
  position: number;
  color: string;
  contact_count: number;
  created_at: string;
  updated_at: string;
}

export interface MoveResult {
  contact_id: string;
  previous_stage: { id: string; name: string } | null;
  new_stage: { id: string; name: string } | null;
  moved_at: string;
}

export interface Contact {
  id: string;
  phone_number: string;
  name?: string | null;
  email?: string | null;
  tags?: string[];
  custom_fields?: Record<string, unknown>;
  assigned_agent_id?: string | null;
  [field: string]: unknown;
}

export interface ContactInput {
  phone_number: string;
  name?: string;
  email?: string;
  tags?: string[];
  custom_fields?: Record<string, unknown>;
  assigned_agent_id?: string;
  [field: string]: unknown;
}

export type BulkRequest =
  | { operation: 'create'; contacts: { phone_number: string; name?: string; email?: string; tags?: string[] }[] }
  | { operation: 'update'; contacts: { id: string; add_tags?: string[]; custom_fields?: Record<string, unknown> }[] }
  | { operation: 'delete'; contact_ids: string[] }
  | { operation: 'add_tags' | 'remove_tags'; contact_ids: string[]; tags: string[] }
  | { operation: 'set_funnel_stage'; contact_ids: string[]; funnel_stage_id: string };

export interface BulkResult {
  operation: BulkRequest['operation'];
  success_count: number;
  error_count: number;
  results: { success: boolean; contact_id?: string | null; phone_number?: string; error?: string; existing_contact_id?: string }[];
}

export interface TeamAgent {
  id: string;
  name: string | null;
  email: string;
  role: 'super_admin' | 'admin' | 'agent';
  is_available: boolean;
  assigned_conversations: number;
}

export interface AiSettings {
  aiEnabled: boolean;
  aiMode: string;
  aiPausedUntil: string | null;
}

export interface PauseResult {
  success: boolean;
  pausedUntil: string | null;
  message: string;
}

/** v3 rules (current) or the legacy v1/v2 shapes. */
export type SegmentRules =
  | { version: 3; filters: Record<string, unknown> }
  | { version: 2; operator: 'AND' | 'OR'; groups: unknown[] }
  | { operator: 'AND' | 'OR'; conditions: unknown[] };

export interface Segment {
  id: string;
  name: string;
  description?: string | null;
  color?: string | null;
  type: 'static' | 'dynamic';
  contactCount: number;
  rules?: SegmentRules | null;
  rulesFormat: 'filters' | 'legacy' | null;
  filters: Record<string, unknown> | null;
  countStale?: boolean;
  rulesError?: string;
  typeChangeIgnored?: boolean;
  [field: string]: unknown;
}

export interface SegmentInput {
  name: string;
  type: 'static' | 'dynamic';
  rules?: SegmentRules;
  description?: string;
  color?: string;
}

export type MembersRequest =
  | { action: 'add' | 'remove'; contactIds: string[] }
  | { action: 'add' | 'remove'; search?: string; filters?: Record<string, unknown> };

export interface MembersResult {
  action: 'add' | 'remove';
  affected: number;
  contactIds?: string[];
  contactCount: number;
  countStale?: boolean;
}

export interface WebhookSubscription {
  id: string;
  name: string;
  url: string;
  events: string[];
  /** only on create and regenerate */
  secret?: string;
  createdAt?: string;
  [field: string]: unknown;
}

export interface WebhookEvent<D = Record<string, unknown>> {
  event: string;
  data: D;
}

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}
