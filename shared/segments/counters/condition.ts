/** A transaction's condition check on one item of the table. */
import type { TransactItem } from '#shared/events/outbox.ts';
import { table } from '#shared/store/client.ts';
import type { Key } from '#shared/store/keys.ts';

export const ConditionCheck = (key: Key, expression: string, values?: Record<string, unknown>): TransactItem => ({
  ConditionCheck: { TableName: table(), Key: key, ConditionExpression: expression, ...(values ? { ExpressionAttributeValues: values } : {}) },
});
