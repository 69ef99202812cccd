/**
 * Funnel items: `STAGE#{id}` per stage (name, colour, `rank`, `slot`, `contact_count`) and `FSLOT#{n}` for the 50
 * slots a stage can hold: creating a stage claims a free slot in its transaction, so the limit is exact and
 * concurrent creates contend on nothing but, rarely, the same randomly picked slot.
 *
 * A stage's position is its index when the stages are sorted by (`rank`, id), so positions are a permutation of
 * 0..n-1 by construction, whatever runs concurrently. Inserting at a position gives the new stage a rank between
 * its neighbours (no other stage is written, so concurrent inserts do not contend); a reorder rewrites the ranks
 * of all stages in one transaction. Counter changes (`contact_count`) never touch the funnel item: moving
 * contacts does not contend with editing the funnel.
 */
import { table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';
import { queryPrefix } from '#shared/store/query.ts';
import type { TransactItem } from '#shared/events/outbox.ts';
import type { FunnelStage } from './model.ts';

/** Ranks of a freshly ordered funnel: wide gaps, so that many inserts fit between two stages. */
export const RANK_STEP = 1024;

export interface RankedStage extends FunnelStage {
  rank: number;
  /** The limit slot the stage holds (see slotClaim). */
  slot: number | null;
}

const toRanked = (item: Record<string, any>): Omit<RankedStage, 'position'> => ({
  id: item.id,
  name: item.name,
  color: item.color,
  contact_count: Math.max(0, Number(item.contact_count ?? 0)),
  created_at: item.created_at,
  updated_at: item.updated_at,
  rank: Number(item.rank ?? 0),
  slot: typeof item.slot === 'number' ? item.slot : null,
});

/** The API's Funnel stage resource, in its field order. */
export const publicStage = (s: FunnelStage): FunnelStage => ({
  id: s.id,
  name: s.name,
  position: s.position,
  color: s.color,
  contact_count: s.contact_count,
  created_at: s.created_at,
  updated_at: s.updated_at,
});

/** The stages in funnel order with their positions 0..n-1 (and ranks, for the code that inserts and reorders). */
export async function listRankedStages(bid: string, consistent = false): Promise<RankedStage[]> {
  const { pk, skPrefix } = keys.stagePrefix(bid);
  const stages = (await queryPrefix(pk, skPrefix, consistent)).map(toRanked);
  stages.sort((a, b) => a.rank - b.rank || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return stages.map((s, position) => ({ ...s, position }));
}

export async function listStages(bid: string, consistent = false): Promise<FunnelStage[]> {
  return (await listRankedStages(bid, consistent)).map(publicStage);
}

/** One stage with its position (which depends on the others, so the funnel is read: at most 50 small items). */
export async function getStage(bid: string, id: string): Promise<FunnelStage | undefined> {
  const found = (await listRankedStages(bid, true)).find((s) => s.id === id.toLowerCase());
  return found && publicStage(found);
}

/** Claims a free slot for a new stage; fails when another stage took it meanwhile. */
export const slotClaim = (bid: string, slot: number, stageId: string): TransactItem => ({
  Put: {
    TableName: table(),
    Item: { ...keys.stageSlot(bid, slot), type: 'stageSlot', stageId },
    ConditionExpression: 'attribute_not_exists(pk)',
  },
});

export const slotRelease = (bid: string, slot: number): TransactItem => ({
  Delete: { TableName: table(), Key: keys.stageSlot(bid, slot) },
});

export const stagePut = (bid: string, stage: FunnelStage, rank: number, slot: number): TransactItem => ({
  Put: {
    TableName: table(),
    Item: { ...keys.stage(bid, stage.id), type: 'stage', businessId: bid, ...publicStage(stage), rank, slot },
    ConditionExpression: 'attribute_not_exists(pk)',
  },
});

/**
 * Sets a stage's rank if it still has the rank that was read: a funnel rewritten from a stale read (two reorders,
 * or a reorder and a re-spacing insert, that read the same ranks) cancels instead of merging into an order nobody
 * asked for.
 */
export const stageRank = (bid: string, id: string, rank: number, expected: number): TransactItem => ({
  Update: {
    TableName: table(),
    Key: keys.stage(bid, id),
    UpdateExpression: 'SET #r = :r',
    ConditionExpression: 'attribute_exists(pk) AND (#r = :expected OR attribute_not_exists(#r))',
    ExpressionAttributeNames: { '#r': 'rank' },
    ExpressionAttributeValues: { ':r': rank, ':expected': expected },
  },
});

/**
 * The rank that puts a new stage at `position` among `ordered`, or null when the neighbours are too close to
 * split (the caller then re-spaces every rank). The rank is drawn at random inside the gap, so concurrent inserts
 * at one position get distinct ranks (a tie would leave no room between the two for a later insert).
 */
export function rankAt(ordered: RankedStage[], position: number, random = Math.random): number | null {
  const spread = 0.25 + random() / 2;
  if (ordered.length === 0) return RANK_STEP * spread;
  if (position >= ordered.length) return ordered[ordered.length - 1].rank + RANK_STEP * (0.5 + spread);
  if (position <= 0) return ordered[0].rank - RANK_STEP * (0.5 + spread);
  const before = ordered[position - 1].rank;
  const after = ordered[position].rank;
  const rank = before + (after - before) * spread;
  return after - before > 1e-6 && rank > before && rank < after ? rank : null;
}

export const stageFieldsUpdate = (bid: string, id: string, fields: { name?: string; color?: string }, updatedAt: string): TransactItem => {
  const names: Record<string, string> = { '#u': 'updated_at' };
  const values: Record<string, unknown> = { ':u': updatedAt };
  const sets = ['#u = :u'];
  for (const [k, val] of Object.entries(fields)) {
    if (val === undefined) continue;
    names[`#${k}`] = k;
    values[`:${k}`] = val;
    sets.push(`#${k} = :${k}`);
  }
  return {
    Update: {
      TableName: table(),
      Key: keys.stage(bid, id),
      UpdateExpression: `SET ${sets.join(', ')}`,
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    },
  };
};

/** Deletes a stage only while it holds no contacts (the condition is the invariant, not the earlier read). */
export const stageDeleteIfEmpty = (bid: string, id: string): TransactItem => ({
  Delete: {
    TableName: table(),
    Key: keys.stage(bid, id),
    ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(contact_count) OR contact_count = :zero)',
    ExpressionAttributeValues: { ':zero': 0 },
  },
});

/** +1 / -1 on a stage's contact_count; the stage must exist (a move into a deleted stage fails). */
export const stageCount = (bid: string, id: string, delta: number): TransactItem => ({
  Update: {
    TableName: table(),
    Key: keys.stage(bid, id),
    UpdateExpression: 'ADD contact_count :d',
    ConditionExpression: 'attribute_exists(pk)',
    ExpressionAttributeValues: { ':d': delta },
  },
});

/** The counter items of contacts leaving and entering stages, one item per stage (a transaction touches an item once). */
export function stageCountItems(bid: string, moves: { from: string | null; to: string | null }[]): { items: TransactItem[]; stageIds: string[] } {
  const delta = new Map<string, number>();
  for (const { from, to } of moves) {
    if (from === to) continue;
    if (from) delta.set(from, (delta.get(from) ?? 0) - 1);
    if (to) delta.set(to, (delta.get(to) ?? 0) + 1);
  }
  const entries = [...delta.entries()].filter(([, d]) => d !== 0);
  return { items: entries.map(([id, d]) => stageCount(bid, id, d)), stageIds: entries.map(([id]) => id) };
}
