/**
 * The SQS client, one per container, and the command queue.ts sends with it. queue.ts imports this module on
 * the first send, so that a cold start does not evaluate the SQS client.
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import { config } from '#shared/config.ts';

export { SendMessageCommand } from '@aws-sdk/client-sqs';

export const sqs = new SQSClient({ region: config.region });
