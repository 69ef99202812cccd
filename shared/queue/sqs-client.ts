/**
 * The SQS client, one per container, and the commands queue.ts sends with it. queue.ts imports this module on the
 * first send (a chunk of its own, see shared/lang/on-first-use.ts), so that a cold start neither parses nor evaluates
 * the SQS client.
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import { config } from '#shared/config.ts';

export { SendMessageBatchCommand, SendMessageCommand } from '@aws-sdk/client-sqs';

export const sqs = new SQSClient({ region: config.region });
