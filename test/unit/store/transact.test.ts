import { cancellationCodes, cancelledByCondition } from '#shared/store/transact.ts';

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
