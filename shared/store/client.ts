/**
 * The table client, created once per container (outside any handler) and reused by every request.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { config } from '#shared/config.ts';
import { requiredEnv } from '#shared/settings/env.ts';

const local = config.dynamodbEndpoint !== undefined;

export const dynamo = new DynamoDBClient({
  region: config.region,
  endpoint: config.dynamodbEndpoint,
  // Throttling is transient: five attempts with the SDK's backoff absorb a burst before a request gives up (503).
  maxAttempts: 5,
  // DynamoDB Local accepts any credentials; AWS uses the function's role.
  ...(local ? { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
});

/**
 * Numbers are JSON's: what the service stores as it came (an inbound message's fields, Meta's or a client's) may hold
 * one past 2^53, which JSON.parse read already as the nearest double, and is written and read back as that double
 * (the document client's default refuses to write it, and reads one as a BigInt, which JSON cannot serialize). The
 * API's own number fields are bounded before they get here (shared/http/middleware/body.ts).
 */
export const db = DynamoDBDocumentClient.from(dynamo, {
  marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false, allowImpreciseNumbers: true },
  unmarshallOptions: { wrapNumbers: (value: string) => Number(value) },
});

/** The table's name, read on every use: a function without TABLE_NAME fails its first request naming it. */
export const table = (): string => requiredEnv('TABLE_NAME');
