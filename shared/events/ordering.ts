/**
 * Ordering keys. Events that share a key reach each subscription in the order they were committed
 * (their outbox time): a contact's `contact.stage_changed` never overtakes its `contact.created`, a
 * message's `message.read` never overtakes its `message.sent`. Events with different keys flow
 * independently, so one slow contact does not hold up the others.
 *
 * - contact, message and conversation events: the contact (`contact_id`, `contact.id`; `id` for contact
 *   events), else the conversation (`conversation_id`);
 * - funnel events: one lane per business (stage created before updated, deleted or reordered);
 * - broadcast events: the broadcast.
 */
/** What ordering needs of an event (structural, so that this module imports nothing of the outbox that uses it). */
interface Ordered {
  event: string;
  data: Record<string, unknown>;
}

/** Key used in the outbox index for events that need no ordering. */
export const UNORDERED = '-';

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);

export function orderingKey(e: Ordered): string | undefined {
  const d = (e.data ?? {}) as Record<string, any>;
  const group = e.event.split('.')[0];
  if (group === 'funnel_stage' || group === 'funnel_stages') return 'funnel';
  if (group === 'broadcast') {
    const id = str(d.broadcast_id) ?? str(d.id);
    return id ? `broadcast:${id}` : undefined;
  }
  const contact = str(d.contact_id) ?? str(d.contact?.id) ?? (group === 'contact' ? str(d.id) : undefined);
  if (contact) return `contact:${contact}`;
  const conversation = str(d.conversation_id) ?? str(d.conversation?.id);
  if (conversation) return `conversation:${conversation}`;
  return undefined;
}

/** The outbox sort key of an event: time first, so lanes and the sweep replay in commit order. */
export const eventSk = (e: { createdAt: string; id: string }): string => `${e.createdAt}#${e.id}`;
