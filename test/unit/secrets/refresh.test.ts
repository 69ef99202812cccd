/**
 * A failed credential check forces a re-read of its secret at most once per 30 s per secret and container, so a
 * stream of badly signed, unauthenticated webhooks cannot become a stream of Secrets Manager calls.
 */
import { mayRefresh } from '#shared/secrets/secrets.ts';

it('allows one forced re-read per key every 30 s', () => {
  // Prepare
  const t0 = 1_000_000;
  // Act
  const answers = [mayRefresh('a', t0), mayRefresh('a', t0 + 1_000), mayRefresh('b', t0 + 1_000), mayRefresh('a', t0 + 29_999), mayRefresh('a', t0 + 30_000)];
  // Assess
  expect(answers).toEqual([true, false, true, false, true]);
});
