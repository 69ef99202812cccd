/** The cold-start baseline: a function that only creates a DynamoDB document client and returns 200. */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

const db = DynamoDBDocumentClient.from(new DynamoDBClient({}));

export const handler = async () => ({ statusCode: 200, body: db ? 'ok' : '' });
