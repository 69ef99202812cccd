/**
 * Throughput per phone number holds across containers: concurrent reservations (as from several Lambda
 * instances) never put more sends than the limit into any one second.
 */
import { randomUUID } from 'node:crypto';
import { reserveSendSlot } from '#shared/upstream/throughput.ts';

it('admits at most the per-second limit in any second, and lets every send through eventually', async () => {
  // Prepare
  const phoneNumberId = `test-${randomUUID()}`;
  const limit = 4;

  // Act: 10 concurrent senders for one number.
  const admittedAt = await Promise.all(Array.from({ length: 10 }, () => reserveSendSlot(phoneNumberId, limit)));

  // Assess: every sender got a place (none gave up), never more than the limit in one second's window.
  expect(admittedAt.every((s) => typeof s === 'number')).toBe(true);
  const perSecond = new Map<number, number>();
  for (const s of admittedAt as number[]) perSecond.set(s, (perSecond.get(s) ?? 0) + 1);
  expect(Math.max(...perSecond.values())).toBeLessThanOrEqual(limit);
  expect(perSecond.size).toBeGreaterThanOrEqual(3);
}, 20_000);
