import fc from 'fast-check';
import { activePause, decide, pauseRunning, type BlockReason } from '#shared/ai/precedence.ts';

const NOW = new Date('2026-11-20T12:00:00.000Z');
const at = (offsetMs: number) => new Date(NOW.getTime() + offsetMs).toISOString();

// Each pause is absent, running (ends in the future), ended in the past, or ending exactly now.
const PAUSES = { none: null, running: at(60_000), ended: at(-60_000), endsNow: at(0) } as const;
type PauseCase = keyof typeof PAUSES;
const running = (p: PauseCase) => p === 'running';

describe('decide (AI precedence)', () => {
  const combos: [boolean, PauseCase, boolean, PauseCase][] = [];
  for (const g of [true, false]) for (const gp of Object.keys(PAUSES) as PauseCase[])
    for (const c of [true, false]) for (const cp of Object.keys(PAUSES) as PauseCase[]) combos.push([g, gp, c, cp]);

  it.each(combos)('global %s, global pause %s, conversation %s, conversation pause %s', (g, gp, c, cp) => {
    // Prepare: what the contract's order says should block, highest first
    const expected: BlockReason | null = !g ? 'global_disabled' : running(gp) ? 'global_paused' : !c ? 'conversation_disabled' : running(cp) ? 'conversation_paused' : null;

    // Act
    const decision = decide({ enabled: g, pausedUntil: PAUSES[gp] }, { aiEnabled: c, aiPausedUntil: PAUSES[cp] }, NOW);

    // Assess
    expect(decision).toEqual(expected === null ? { answer: true } : { answer: false, blockedBy: expected });
  });

  it('keeps a globally disabled AI silent even when the conversation has it enabled and nothing is paused', () => {
    expect(decide({ enabled: false, pausedUntil: null }, { aiEnabled: true, aiPausedUntil: null }, NOW)).toEqual({ answer: false, blockedBy: 'global_disabled' });
  });

  describe.each(['global', 'conversation'] as const)('%s pause boundaries', (which) => {
    const decideWith = (pausedUntil: string, now: Date) =>
      which === 'global'
        ? decide({ enabled: true, pausedUntil }, { aiEnabled: true, aiPausedUntil: null }, now)
        : decide({ enabled: true, pausedUntil: null }, { aiEnabled: true, aiPausedUntil: pausedUntil }, now);
    const end = '2026-11-20T12:05:00.000Z';

    it('blocks one second and one millisecond before the end', () => {
      expect(decideWith(end, new Date('2026-11-20T12:04:59.000Z')).answer).toBe(false);
      expect(decideWith(end, new Date('2026-11-20T12:04:59.999Z')).answer).toBe(false);
    });

    it('answers at the exact second the pause ends, and after', () => {
      expect(decideWith(end, new Date('2026-11-20T12:05:00.000Z'))).toEqual({ answer: true });
      expect(decideWith(end, new Date('2026-11-20T12:05:01.000Z'))).toEqual({ answer: true });
    });

    it('reads a pause end without milliseconds the same way', () => {
      expect(decideWith('2026-11-20T12:05:00Z', new Date('2026-11-20T12:04:59.999Z')).answer).toBe(false);
      expect(decideWith('2026-11-20T12:05:00Z', new Date('2026-11-20T12:05:00.000Z')).answer).toBe(true);
    });
  });

  it('answers exactly when all four conditions hold (property)', () => {
    const pause = fc.option(fc.integer({ min: -3_600_000, max: 3_600_000 }).map(at), { nil: null });
    fc.assert(
      fc.property(fc.boolean(), pause, fc.boolean(), pause, (g, gp, c, cp) => {
        const d = decide({ enabled: g, pausedUntil: gp }, { aiEnabled: c, aiPausedUntil: cp }, NOW);
        const allHold = g && !(gp !== null && Date.parse(gp) > NOW.getTime()) && c && !(cp !== null && Date.parse(cp) > NOW.getTime());
        expect(d.answer).toBe(allHold);
      }),
    );
  });
});

describe('pauseRunning and activePause', () => {
  it('treat a missing or unreadable end as no pause', () => {
    expect(pauseRunning(null, NOW)).toBe(false);
    expect(pauseRunning(undefined, NOW)).toBe(false);
    expect(pauseRunning('not a date', NOW)).toBe(false);
    expect(activePause('not a date', NOW)).toBeNull();
  });

  it('show a running pause and hide an ended one', () => {
    expect(activePause(PAUSES.running, NOW)).toBe(PAUSES.running);
    expect(activePause(PAUSES.ended, NOW)).toBeNull();
    expect(activePause(PAUSES.endsNow, NOW)).toBeNull();
  });
});
