/**
 * Freezing the audience when a broadcast starts: the contact ids of its segment (a dynamic segment is
 * evaluated once, here) or of its explicit list, then each contact's full record, which decides whether it is
 * sent to (personalised request) or skipped (with the reason).
 */
import { batchGetContacts } from '#shared/contacts/repository.ts';
import { getSegment, listMemberIds } from '#shared/segments/repository.ts';
import { countSegment } from '#shared/segments/count.ts';
import type { Contact } from '#shared/contacts/model.ts';
import { explicitAudience } from './repository.ts';
import type { NewRecipient } from './recipients.ts';
import { MissingParameter, personalize } from './personalize.ts';
import type { Broadcast, SkipReason } from './model.ts';

/** Why the audience could not be resolved: the broadcast fails with this. */
export class AudienceUnavailable extends Error {
  constructor(readonly error: string, message: string) {
    super(message);
  }
}

/** A dynamic segment's evaluation may take longer than an API request's count budget. */
const EVALUATION_BUDGET_MS = 45_000;

export async function audienceContactIds(b: Broadcast): Promise<string[]> {
  if (b.audience.type === 'contacts') return explicitAudience(b.businessId, b.id);
  const segment = await getSegment(b.businessId, b.audience.segment_id);
  if (!segment) throw new AudienceUnavailable('segment_not_found', 'The segment of this broadcast no longer exists');
  // Static: every member, so that deleted or opted-out members show up as skipped with their reason.
  if (segment.segmentType === 'static') return listMemberIds(b.businessId, segment.id);
  const outcome = await countSegment(b.businessId, segment, { collect: true, deadline: Date.now() + EVALUATION_BUDGET_MS });
  if (outcome.rulesError) throw new AudienceUnavailable('segment_rules_invalid', outcome.rulesError);
  if (outcome.stale || !outcome.matched) throw new AudienceUnavailable('segment_evaluation_timeout', 'The segment could not be evaluated in time');
  return outcome.matched.map((c) => c.id);
}

const skip = (contactId: string, seq: number, reason: SkipReason, phone: string | null = null): NewRecipient =>
  ({ contact_id: contactId, seq, state: 'skipped', phone_number: phone, reason });

/** Why a contact is not sent to, or undefined when it is: asked when the audience is frozen and again at its turn. */
export function unreachable(contact: Contact | undefined): Extract<SkipReason, 'not_found' | 'deleted' | 'opted_out' | 'no_phone'> | undefined {
  if (!contact) return 'not_found';
  if (contact.deleted_at) return 'deleted';
  if (contact.opted_out) return 'opted_out';
  if (!contact.phone_number) return 'no_phone';
  return undefined;
}

export function classify(contactId: string, seq: number, contact: Contact | undefined, b: Broadcast, seenPhones: Set<string>): NewRecipient {
  const reason = unreachable(contact);
  if (reason || !contact?.phone_number) return skip(contactId, seq, reason ?? 'no_phone', contact?.phone_number ?? null);
  // Phones are unique among live contacts; this only guards against sending one number twice.
  if (seenPhones.has(contact.phone_number)) return skip(contactId, seq, 'duplicate_phone', contact.phone_number);
  let request: Record<string, unknown>;
  try {
    request = { ...personalize(b.template, contact), to: contact.phone_number };
  } catch (err) {
    if (err instanceof MissingParameter) return skip(contactId, seq, 'missing_parameter', contact.phone_number);
    throw err;
  }
  seenPhones.add(contact.phone_number);
  return { contact_id: contactId, seq, state: 'pending', phone_number: contact.phone_number, request };
}

/** The frozen audience: one recipient per distinct contact id, in audience order. */
export async function freezeAudience(b: Broadcast): Promise<NewRecipient[]> {
  const ids = [...new Set(await audienceContactIds(b))];
  const contacts = await batchGetContacts(b.businessId, ids);
  const seenPhones = new Set<string>();
  return ids.map((id, seq) => classify(id, seq, contacts.get(id)?.contact, b, seenPhones));
}
