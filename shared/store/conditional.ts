/**
 * Conditional single-item writes: a condition that does not hold is an expected outcome (someone else got there
 * first, the item is gone or in another state), not an error.
 */

/** True when `err` is DynamoDB's condition failure, matched by name so both the client class and lib-dynamodb errors count. */
export const isConditionFailure = (err: unknown): boolean => (err as { name?: string })?.name === 'ConditionalCheckFailedException';

/** Awaits a single-item conditional write: true when it applied, false when its condition did not hold; other errors are rethrown. */
export async function applied(write: Promise<unknown>): Promise<boolean> {
  try {
    await write;
    return true;
  } catch (err) {
    if (isConditionFailure(err)) return false;
    throw err;
  }
}
