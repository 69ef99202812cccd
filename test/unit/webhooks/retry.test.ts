import { backoffSeconds, nextDelaySeconds, parseRetryAfter, type RetryPolicy } from '#shared/webhooks/retry.ts';

// The deployed defaults of shared/webhooks/settings.ts.
const deployed: RetryPolicy = { baseSeconds: 60, factor: 4, capSeconds: 86_400, maxAttempts: 9 };

describe('webhook retry schedule', () => {
  it('spreads the deployed attempts over about 3 days, at least 8 attempts and at least 1 hour', () => {
    // Prepare: the smallest and largest jitter.
    const total = (random: () => number) => {
      let seconds = 0;
      for (let failed = 1; failed < deployed.maxAttempts; failed++) seconds += backoffSeconds(failed, deployed, random);
      return seconds;
    };

    // Act
    const shortest = total(() => 0);
    const longest = total(() => 0.999);

    // Assess
    expect(deployed.maxAttempts).toBeGreaterThanOrEqual(8);
    expect(shortest / 3600).toBeGreaterThan(48);
    expect(longest / 3600).toBeLessThan(96);
  });

  it('grows exponentially, stays within ±20 % jitter and under the cap', () => {
    expect(backoffSeconds(1, deployed, () => 0.5)).toBeCloseTo(60);
    expect(backoffSeconds(2, deployed, () => 0.5)).toBeCloseTo(240);
    expect(backoffSeconds(3, deployed, () => 0.5)).toBeCloseTo(960);
    expect(backoffSeconds(1, deployed, () => 0)).toBeCloseTo(48);
    expect(backoffSeconds(1, deployed, () => 0.999)).toBeLessThan(72);
    expect(backoffSeconds(20, deployed, () => 0.999)).toBeLessThanOrEqual(86_400);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });

  it('lets Retry-After lengthen the wait, up to the cap', () => {
    expect(nextDelaySeconds(1, '7200', deployed)).toBe(7200);
    expect(nextDelaySeconds(1, '999999', deployed)).toBe(86_400);
    expect(nextDelaySeconds(1, undefined, deployed)).toBeGreaterThanOrEqual(48);
  });

  it.each(['0', '1', '7', 'Thu, 01 Jan 1970 00:00:00 GMT', 'garbage'])('never lets Retry-After: %s shorten the scheduled backoff', (asked) => {
    // The smallest jitter: the shortest wait the schedule itself allows.
    for (const failed of [1, 2, 5]) {
      const floor = backoffSeconds(failed, deployed, () => 0);
      expect(nextDelaySeconds(failed, asked, deployed)).toBeGreaterThanOrEqual(floor);
    }
  });
});
