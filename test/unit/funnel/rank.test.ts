import fc from 'fast-check';
import { rankAt, type RankedStage } from '#shared/funnel/repository.ts';

const stage = (rank: number, i: number): RankedStage => ({
  id: `s${i}`, name: `S${i}`, position: i, color: '#6366f1', contact_count: 0, created_at: '', updated_at: '', rank, slot: i,
});

describe('rankAt', () => {
  it('puts the new stage exactly at the asked position, for any funnel and position', () => {
    fc.assert(fc.property(
      fc.uniqueArray(fc.integer({ min: -1e6, max: 1e6 }), { maxLength: 49 }).map((ranks) => [...ranks].sort((a, b) => a - b)),
      fc.nat(60),
      fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
      (ranks, position, r) => {
        const ordered = ranks.map(stage);
        const rank = rankAt(ordered, position, () => r);
        if (rank === null) return ranks[position - 1] !== undefined && ranks[position] - ranks[position - 1] <= 1e-6;
        const at = Math.min(position, ordered.length);
        const index = [...ranks, rank].sort((a, b) => a - b).indexOf(rank);
        return index === at && !ranks.includes(rank);
      },
    ));
  });

  it('gives concurrent inserts at one position distinct ranks', () => {
    const ordered = [0, 1024].map(stage);
    const ranks = new Set(Array.from({ length: 50 }, () => rankAt(ordered, 1)));
    expect(ranks.size).toBe(50);
  });
});
