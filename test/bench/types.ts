/**
 * What each benchmark module contributes to `npm run bench`: figures measured beside their baseline in the
 * same run, so the verdict is a ratio that a slow or noisy machine does not change.
 * A module is `test/bench/<name>.bench.ts` exporting `run(options): Promise<BenchFigure[]>`.
 */
export interface BenchOptions {
  /** `npm run bench -- --quick`: reduced sizes, whole run under 2 minutes. */
  quick: boolean;
  /** DynamoDB Local endpoint started by the harness (TABLE_NAME is set too). */
  dynamodbEndpoint: string;
}

export interface BenchFigure {
  /** e.g. "segments: dynamic count, 100k contacts". */
  name: string;
  /** Median of the measured runs. */
  value: number;
  unit: 'ms' | 'ops/s' | 'MB' | 'bytes' | 'x';
  /** Spread of the measured runs (max - min), same unit. */
  spread?: number;
  /** The baseline measured in the same run, same unit. */
  baseline?: number;
  baselineName?: string;
  /**
   * value / baseline, unless the module measures the ratio itself: cold start takes the median of the ratios of its
   * paired runs (each run of a function beside the baseline run just before it).
   */
  ratio?: number;
  /**
   * Target on value / baseline: `maxRatio` for times and sizes (lower is better), `minRatio` for rates
   * (higher is better). A missed target makes `npm run bench` exit non-zero.
   */
  target?: { maxRatio?: number; minRatio?: number };
  /** Free text printed under the table (e.g. absolute figures, growth). */
  note?: string;
}

export type BenchModule = { run: (options: BenchOptions) => Promise<BenchFigure[]> };

/** Median and spread of `n` timed runs of `fn` (after `warmup` untimed runs). */
export async function measure(fn: () => Promise<unknown>, n = 5, warmup = 1): Promise<{ median: number; spread: number; samples: number[] }> {
  for (let i = 0; i < warmup; i++) await fn();
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    samples.push(performance.now() - t);
  }
  const sorted = [...samples].sort((a, b) => a - b);
  return { median: sorted[Math.floor(sorted.length / 2)], spread: sorted[sorted.length - 1] - sorted[0], samples };
}

type Measured = { median: number; spread: number; samples: number[] };

const summary = (samples: number[]): Measured => {
  const sorted = [...samples].sort((a, b) => a - b);
  return { median: sorted[Math.floor(sorted.length / 2)], spread: sorted[sorted.length - 1] - sorted[0], samples };
};

/**
 * Times `fn` and its baseline in turns (fn, baseline, fn, baseline...), after `warmup` turns of each, so that
 * whatever the machine is doing meanwhile (a JIT still compiling, a garbage collection, another process)
 * weighs on both sides of the ratio alike.
 */
export async function measurePaired(fn: () => Promise<unknown>, baseline: () => Promise<unknown>, n = 5, warmup = 1): Promise<[Measured, Measured]> {
  for (let i = 0; i < warmup; i++) {
    await fn();
    await baseline();
  }
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < n; i++) {
    for (const [run, into] of [[fn, a], [baseline, b]] as const) {
      const t = performance.now();
      await run();
      into.push(performance.now() - t);
    }
  }
  return [summary(a), summary(b)];
}
