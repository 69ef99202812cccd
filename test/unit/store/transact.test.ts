import { cancellationCodes, cancelledByCondition, optimistic, RetryableConflict } from '#shared/store/transact.ts';

/** The error DynamoDB's client throws for a cancelled TransactWriteItems, with one reason per item. */
const cancelled = (...codes: (string | undefined)[]) =>
  Object.assign(new Error('Transaction cancelled'), { name: 'TransactionCanceledException', CancellationReasons: codes.map((Code) => (Code ? { Code } : {})) });

describe('reading a cancelled transaction', () => {
  it('lists one code per item, None for an item without a reason', () => {
    expect(cancellationCodes(cancelled('None', 'ConditionalCheckFailed', undefined))).toEqual(['None', 'ConditionalCheckFailed', 'None']);
    expect(cancellationCodes(Object.assign(new Error('x'), { name: 'TransactionCanceledException' }))).toEqual([]);
  });

  it('is not a cancelled transaction for any other error', () => {
    expect(cancellationCodes(Object.assign(new Error('x'), { name: 'ConditionalCheckFailedException' }))).toBeUndefined();
    expect(cancellationCodes(undefined)).toBeUndefined();
    expect(cancellationCodes('TransactionCanceledException')).toBeUndefined();
  });

  it('tells a failed condition from a lost race', () => {
    expect(cancelledByCondition(cancelled('None', 'ConditionalCheckFailed'))).toBe(true);
    expect(cancelledByCondition(cancelled('TransactionConflict', 'None'))).toBe(false);
    expect(cancelledByCondition(Object.assign(new Error('x'), { name: 'ConditionalCheckFailedException' }))).toBe(false);
    expect(cancelledByCondition(null)).toBe(false);
  });
});

describe('optimistic retries', () => {
  it('retries lost races until the work commits', async () => {
    let calls = 0;
    const out = await optimistic(async () => {
      calls++;
      if (calls < 3) throw cancelled('TransactionConflict');
      return 'done';
    }, 1_000);
    expect([out, calls]).toEqual(['done', 3]);
  });

  it('starts no attempt that would run past the time-out: a slow attempt near the end of the budget ends in 409', async () => {
    // Budget 1 s, so attempts must end by 1.8 s. The first attempt takes 950 ms and loses its race: another as long
    // would end at 1.9 s, so none is started (the old rule started it, since 950 ms was still inside the budget).
    let calls = 0;
    const err = await optimistic(async () => {
      calls++;
      await new Promise((r) => setTimeout(r, 950));
      throw new RetryableConflict();
    }, 1_000).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 409, body: { error: 'conflict' } });
    expect(calls).toBe(1);
  });

  it('keeps retrying short attempts for the whole budget', async () => {
    let calls = 0;
    await optimistic(async () => {
      calls++;
      await new Promise((r) => setTimeout(r, 100));
      throw new RetryableConflict();
    }, 1_000).catch(() => undefined);
    expect(calls).toBeGreaterThanOrEqual(5);
  });
});
