/**
 * The funnel's rules: at most 50 stages, positions 0..n-1 with insert-at-position shifting the others,
 * reorder keeping unlisted stages in their relative order, delete only when empty, exact contact counts.
 */
import { randomUUID } from 'node:crypto';
import { commit } from '#shared/events/outbox.ts';
import { ApiError, badRequest, notFound } from '#shared/http/errors.ts';
import { cancellationCodes, optimistic, RetryableConflict } from '#shared/store/transact.ts';
import { DEFAULT_STAGE_COLOR, MAX_STAGES, type FunnelStage } from './model.ts';
import { getStage, type RankedStage, listRankedStages, listStages, publicStage, rankAt, RANK_STEP, slotClaim, slotRelease, stageDeleteIfEmpty, stageFieldsUpdate, stagePut, stageRank } from './repository.ts';
import { missingRecord, ownerPut } from '#shared/auth/ownership.ts';
import { stageCreated, stageDeleted, stagesReordered, stageUpdated } from './events.ts';
import { claimSlots } from '#shared/store/slots.ts';

export const stageNotFound = () => notFound('Funnel stage not found');

/** Any cancellation of a funnel transaction that the caller did not explain is a lost race: run again. */
const retryOnCancel = (err: unknown): never => {
  if (cancellationCodes(err)) throw new RetryableConflict('funnel changed concurrently');
  throw err;
};

export { listStages };

export async function getStageOrFail(bid: string, id: string): Promise<FunnelStage> {
  const stage = await getStage(bid, id);
  if (!stage) throw await missingRecord('stage', id, bid, stageNotFound());
  return stage;
}

/** Tries of a create whose randomly picked free slot a concurrent create took first, before it reads afresh. */
const SLOT_TRIES = 8;

const stageLimitReached = () =>
  badRequest('stage_limit_reached', `A funnel has at most ${MAX_STAGES} stages; delete one before adding another`);

export function createStage(bid: string, input: { name: string; color?: string; position?: number }): Promise<FunnelStage> {
  return optimistic(() =>
    claimSlots({
      kinds: [{ max: MAX_STAGES, held: (ordered: RankedStage[]) => ordered.map((s) => s.slot) }],
      read: async () => {
        const ordered = await listRankedStages(bid, true);
        if (ordered.length >= MAX_STAGES) throw stageLimitReached();
        return ordered;
      },
      store: (ordered, [slot]) => storeStage(bid, input, ordered, slot),
      tries: SLOT_TRIES,
      // Lost races past the tries are one more conflict for optimistic() to retry on fresh reads, within its budget.
      exhausted: () => new RetryableConflict('free slots claimed concurrently'),
    }),
  );
}

/** Stores a new stage at its position among `ordered` in `slot`; undefined when a concurrent create took the slot. */
async function storeStage(bid: string, input: { name: string; color?: string; position?: number }, ordered: RankedStage[], slot: number): Promise<FunnelStage | undefined> {
  // A position past the end appends: the stage lands as far as the client asked as the funnel allows.
  const position = Math.min(input.position ?? ordered.length, ordered.length);
  const now = new Date().toISOString();
  const stage: FunnelStage = {
    id: randomUUID(),
    name: input.name,
    position,
    color: input.color ?? DEFAULT_STAGE_COLOR,
    contact_count: 0,
    created_at: now,
    updated_at: now,
  };
  const rank = rankAt(ordered, position);
  const items = [slotClaim(bid, slot, stage.id), ownerPut('stage', stage.id, bid)];
  if (rank === null) {
    // No room between the neighbours: re-space every rank in the same transaction.
    const spaced: { id: string; rank?: number }[] = [...ordered];
    spaced.splice(position, 0, stage);
    items.push(stagePut(bid, stage, position * RANK_STEP, slot));
    spaced.forEach((s, i) => s.rank !== undefined && items.push(stageRank(bid, s.id, i * RANK_STEP, s.rank)));
  } else {
    items.push(stagePut(bid, stage, rank, slot));
  }
  try {
    await commit(items, [stageCreated(bid, stage)]);
  } catch (err) {
    // The slot (the transaction's first item) was taken meanwhile; any other cancellation is a lost race on the ranks.
    if (cancellationCodes(err)?.[0] === 'ConditionalCheckFailed') return undefined;
    retryOnCancel(err);
  }
  return stage;
}

export async function updateStage(bid: string, id: string, fields: { name?: string; color?: string }): Promise<FunnelStage> {
  const current = await getStageOrFail(bid, id);
  const changes = Object.fromEntries(Object.entries(fields).filter(([k, val]) => val !== undefined && (current as any)[k] !== val));
  if (Object.keys(changes).length === 0) return current;
  const updated: FunnelStage = { ...current, ...changes, updated_at: new Date().toISOString() };
  try {
    await commit([stageFieldsUpdate(bid, id, changes, updated.updated_at)], [stageUpdated(bid, updated)]);
  } catch (err) {
    if (cancellationCodes(err)) throw stageNotFound();
    throw err;
  }
  // Re-read for the exact count and position (both may have moved meanwhile).
  return (await getStage(bid, id)) ?? updated;
}

export async function deleteStage(bid: string, id: string): Promise<void> {
  await optimistic(async () => {
    const stage = (await listRankedStages(bid, true)).find((s) => s.id === id.toLowerCase());
    if (!stage) throw await missingRecord('stage', id, bid, stageNotFound());
    if (stage.contact_count > 0) throw stageNotEmpty(stage.contact_count);
    const items = [stageDeleteIfEmpty(bid, stage.id), ...(stage.slot === null ? [] : [slotRelease(bid, stage.slot)])];
    try {
      await commit(items, [stageDeleted(bid, publicStage(stage), new Date().toISOString())]);
    } catch (err) {
      if (cancellationCodes(err)?.[0] === 'ConditionalCheckFailed') {
        // Deleted meanwhile, or a contact moved in after the read: the condition, not the read, decides.
        const fresh = await getStage(bid, id);
        if (!fresh) throw stageNotFound();
        if (fresh.contact_count > 0) throw stageNotEmpty(fresh.contact_count);
      }
      retryOnCancel(err);
    }
  });
}

const stageNotEmpty = (count: number) =>
  new ApiError(400, {
    error: 'stage_not_empty',
    message: `The stage holds ${count} contact(s); move them to another stage before deleting it`,
    contact_count: count,
  });

/** 403 when one of the ids is another account's stage (the contract's rule for every resource), else 404 naming them. */
async function unknownStages(bid: string, invalid: string[]): Promise<ApiError> {
  const notFoundError = notFound('Some stage ids do not belong to this funnel', { invalid_ids: invalid });
  const answers = await Promise.all(invalid.slice(0, MAX_STAGES).map((id) => missingRecord('stage', id.toLowerCase(), bid, notFoundError)));
  return answers.find((e) => e.status === 403) ?? notFoundError;
}

export async function reorderStages(bid: string, stageIds: string[]): Promise<FunnelStage[]> {
  const ids = stageIds.map((id) => id.toLowerCase());
  return optimistic(async () => {
    const ordered = await listRankedStages(bid, true);
    const byId = new Map(ordered.map((s) => [s.id, s]));
    const invalid = stageIds.filter((_, i) => !byId.has(ids[i]));
    if (invalid.length > 0) throw await unknownStages(bid, invalid);
    const listed = new Set(ids);
    // Listed stages first in the given order, then the others in their current relative order.
    const next = [...ids.map((id) => byId.get(id)!), ...ordered.filter((s) => !listed.has(s.id))];
    // Every rank is written, each conditioned on the rank read: the new order applies whole or not at all.
    const items = next.map((s, i) => stageRank(bid, s.id, i * RANK_STEP, s.rank));
    await commit(items, [stagesReordered(bid, next.map((s) => s.id), new Date().toISOString())]).catch(retryOnCancel);
    return next.map((s, position) => publicStage({ ...s, position }));
  });
}
