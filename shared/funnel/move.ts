/**
 * Moving one contact between stages: the contact's stage, the two counters and `contact.stage_changed`
 * in one transaction, conditioned on the contact's version, so a contact is in exactly one stage and every
 * count equals the contacts that point at it, whatever runs concurrently.
 */
import { commit } from '#shared/events/outbox.ts';
import { notFound } from '#shared/http/errors.ts';
import { contactPut, getStoredContact } from '#shared/contacts/repository.ts';
import { cancellationCodes, optimistic, RetryableConflict } from '#shared/store/transact.ts';
import { listStages, stageCountItems } from './repository.ts';
import { contactStageChanged, type StageRef } from './events.ts';
import { stageNotFound } from './service.ts';
import { missingRecord } from '#shared/auth/ownership.ts';

export interface MoveResult {
  contact_id: string;
  previous_stage: StageRef | null;
  new_stage: StageRef | null;
  moved_at: string;
}

const ref = (s: { id: string; name: string } | undefined): StageRef | null => (s ? { id: s.id, name: s.name } : null);

export async function moveContact(bid: string, contactId: string, stageId: string | null): Promise<MoveResult> {
  return optimistic(async () => {
    const stored = await getStoredContact(bid, contactId);
    if (!stored || stored.contact.deleted_at) throw await missingRecord('contact', contactId, bid, notFound('Contact not found'));
    const fromId = stored.contact.funnel_stage_id;
    const stages = stageId || fromId ? await listStages(bid, true) : [];
    const target = stageId ? stages.find((s) => s.id === stageId.toLowerCase()) : undefined;
    if (stageId && !target) throw await missingRecord('stage', stageId, bid, stageNotFound());
    const from = fromId ? stages.find((s) => s.id === fromId) : undefined;
    const movedAt = new Date().toISOString();
    const result: MoveResult = { contact_id: contactId, previous_stage: ref(from), new_stage: ref(target), moved_at: movedAt };
    // Already there: nothing changes, so no counter moves and no event.
    if (fromId === (target?.id ?? null)) return result;

    const next = { ...stored.contact, funnel_stage_id: target?.id ?? null, updated_at: movedAt };
    const counts = stageCountItems(bid, [{ from: from ? fromId : null, to: next.funnel_stage_id }]);
    try {
      await commit(
        [contactPut(bid, next, stored.version, stored.contact), ...counts.items],
        [contactStageChanged(bid, next, ref(from), ref(target), movedAt)],
      );
    } catch (err) {
      const codes = cancellationCodes(err);
      if (!codes) throw err;
      const targetIndex = 1 + counts.stageIds.indexOf(next.funnel_stage_id ?? '');
      if (stageId && targetIndex > 0 && codes[targetIndex] === 'ConditionalCheckFailed') throw stageNotFound();
      throw new RetryableConflict('contact or stage changed concurrently');
    }
    return result;
  });
}
