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

export const db = DynamoDBDocumentClient.from(dynamo, {
  marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
});

/** The table's name, read on every use: a function without TABLE_NAME fails its first request naming it. */
export const table = (): string => requiredEnv('TABLE_NAME');
