/**
 * A contact's `last_contact_at` follows its outbound messages from their `message.sent` events, off the send's
 * request path (the events worker calls this): the contact write is a versioned read-modify-write of the whole
 * record (its filter projection must match), two more round trips a send need not wait for. Moving forward
 * only, it is safe to repeat when the sweep publishes an event again.
 */
import type { DomainEvent } from '#shared/events/outbox.ts';
import { recordContactActivity } from '#shared/contacts/repository.ts';
import { logger } from '#shared/log/logger.ts';

export async function recordSendActivity(events: DomainEvent[]): Promise<void> {
  for (const e of events) {
    if (e.event !== 'message.sent' || typeof e.data.contact_id !== 'string' || typeof e.data.sent_at !== 'string') continue;
    await recordContactActivity(e.businessId, e.data.contact_id, e.data.sent_at).catch((err) => logger.warn('contact activity not recorded', { eventId: e.id, error: err as Error }));
  }
}
