/** Every event of the contract's Events table. */
export const EVENT_NAMES = [
  'message.received',
  'message.sent',
  'message.delivered',
  'message.read',
  'message.failed',
  'conversation.created',
  'conversation.assigned',
  'conversation.unassigned',
  'conversation.closed',
  'contact.created',
  'contact.updated',
  'contact.deleted',
  'contact.stage_changed',
  'broadcast.sent',
  'broadcast.completed',
  'broadcast.failed',
  'funnel_stage.created',
  'funnel_stage.updated',
  'funnel_stage.deleted',
  'funnel_stages.reordered',
] as const;

export type EventName = (typeof EVENT_NAMES)[number];

export const isEventName = (s: string): s is EventName => (EVENT_NAMES as readonly string[]).includes(s);
