/**
 * Message writes touch the conversation item too, so two of them at once (a human reply and an AI reply, a
 * broadcast and an inbound message) can cancel each other with a TransactionConflict. The send has already
 * happened upstream by then: such a write is retried on a short backoff instead of being lost.
 */
import { commit, type DomainEvent, type TransactItem } from '#shared/events/outbox.ts';
import { cancellationCodes } from '#shared/store/transact.ts';

const conflictOnly = (err: unknown): boolean => {
  const codes = cancellationCodes(err) ?? [];
  return codes.includes('TransactionConflict') && !codes.includes('ConditionalCheckFailed');
};

export async function commitWithRetry(items: TransactItem[], events: DomainEvent[] = [], attempts = 6): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await commit(items, events);
    } catch (err) {
      if (attempt >= attempts || !conflictOnly(err)) throw err;
      await new Promise((r) => setTimeout(r, Math.random() * 25 * 2 ** attempt));
    }
  }
}
