/**
 * A customer's marketing preference, as Meta's `user_preferences` webhook reports it: `stop` (they asked the business
 * for no more marketing messages) opts their contact out, so that broadcasts skip them as `opted_out`; `resume` opts
 * them back in. A number the business has no contact for changes nothing (nothing would be sent to it).
 */
import { ApiError } from '#shared/http/errors.ts';
import { logger } from '#shared/log/logger.ts';
import { findContactIdByPhone } from './repository.ts';
import { updateContact } from './service.ts';
import { normalizePhone } from './phone.ts';

const OPTED_OUT: Readonly<Record<string, boolean>> = { stop: true, resume: false };

export async function applyMarketingPreference(businessId: string, preference: Record<string, unknown>): Promise<void> {
  if (preference.category !== 'marketing_messages' || typeof preference.value !== 'string' || !Object.hasOwn(OPTED_OUT, preference.value)) return;
  const phone = normalizePhone(`+${String(preference.wa_id ?? '')}`);
  const contactId = phone ? await findContactIdByPhone(businessId, phone) : undefined;
  if (!contactId) {
    logger.info('marketing preference of a number without a contact ignored', { businessId });
    return;
  }
  try {
    // A contact whose flag already says so is left as it is (no event).
    await updateContact(businessId, contactId, { opted_out: OPTED_OUT[preference.value] });
  } catch (err) {
    // Deleted meanwhile: nothing to opt out.
    if (!(err instanceof ApiError && err.status === 404)) throw err;
  }
}
