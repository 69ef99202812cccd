/**
 * A broadcast: one approved template sent to an audience (a segment or an explicit contact list), paced
 * within the business's messages-per-minute budget, with a per-recipient outcome.
 */
export const BROADCAST_STATUSES = ['scheduled', 'running', 'completed', 'cancelled', 'failed'] as const;
export type BroadcastStatus = (typeof BROADCAST_STATUSES)[number];

/** Stored recipient states. `sending` is a claim by a worker (shown as `pending`). */
export type RecipientState = 'pending' | 'sending' | 'sent' | 'failed' | 'skipped' | 'cancelled';
/** What the API shows: a sent message moves on to `delivered` and `read` as status webhooks arrive. */
export const RECIPIENT_STATUSES = ['pending', 'sent', 'delivered', 'read', 'failed', 'skipped', 'cancelled'] as const;
export type RecipientStatus = (typeof RECIPIENT_STATUSES)[number];

export type SkipReason = 'not_found' | 'deleted' | 'opted_out' | 'no_phone' | 'missing_parameter' | 'duplicate_phone';

/** The template part of a send request, in any of the contract's three forms (everything but `to`). */
export type TemplateRequest = Record<string, unknown> & { type: 'template' };

export type Audience = { type: 'segment'; segment_id: string; segment_type?: string } | { type: 'contacts'; contact_count: number };

export interface BroadcastError {
  error: string;
  code?: string;
  message: string;
}

export interface Broadcast {
  id: string;
  businessId: string;
  name: string;
  status: BroadcastStatus;
  template: TemplateRequest;
  audience: Audience;
  send_at: string | null;
  /** Its place among the business's unfinished broadcasts with a send_at (keys.scheduledBroadcastSlot); none when it has no send_at. */
  schedule_slot?: number;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  completed_at: string | null;
  cancelled_at: string | null;
  failed_at: string | null;
  error: BroadcastError | null;
  pace_per_minute: number;
  counts: Counts;
}

export interface Counts {
  total: number;
  sent: number;
  delivered: number;
  read: number;
  failed: number;
  skipped: number;
  cancelled: number;
}

export const COUNT_NAMES = ['total', 'sent', 'delivered', 'read', 'failed', 'skipped', 'cancelled'] as const;

export interface Recipient {
  broadcast_id: string;
  contact_id: string;
  seq: number;
  state: RecipientState;
  phone_number: string | null;
  request?: Record<string, unknown>;
  reason: SkipReason | string | null;
  message_id: string | null;
  wamid: string | null;
  error: BroadcastError | null;
  delivery_status: 'delivered' | 'read' | null;
  sent_at: string | null;
  delivered_at: string | null;
  read_at: string | null;
  failed_at: string | null;
  lease_until?: number;
  lease?: string;
}

/** Counts as the API and the events show them: with `pending`, the recipients not yet settled. */
export const countsView = (c: Counts) => ({ ...c, pending: Math.max(0, c.total - c.sent - c.failed - c.skipped - c.cancelled) });

/** The API shape of a broadcast. */
export const broadcastView = (b: Broadcast) => ({
  id: b.id,
  name: b.name,
  status: b.status,
  template: b.template,
  audience: b.audience,
  send_at: b.send_at,
  pace_per_minute: b.pace_per_minute,
  counts: countsView(b.counts),
  error: b.error,
  created_at: b.created_at,
  updated_at: b.updated_at,
  started_at: b.started_at,
  completed_at: b.completed_at,
  cancelled_at: b.cancelled_at,
  failed_at: b.failed_at,
});

export const recipientStatus = (r: Pick<Recipient, 'state' | 'delivery_status'>): RecipientStatus =>
  r.state === 'sending' ? 'pending' : r.state === 'sent' && r.delivery_status ? r.delivery_status : r.state;

/** The API shape of a recipient. */
export const recipientView = (r: Recipient) => ({
  contact_id: r.contact_id,
  phone_number: r.phone_number,
  status: recipientStatus(r),
  reason: r.reason,
  message_id: r.message_id,
  wamid: r.wamid,
  error: r.error,
  sent_at: r.sent_at,
  delivered_at: r.delivered_at,
  read_at: r.read_at,
  failed_at: r.failed_at,
});
