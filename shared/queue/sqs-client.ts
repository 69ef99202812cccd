/**
 * The SQS client, one per container, and the command queue.ts sends with it. A side bundle (`#side/sqs-client`,
 * see shared/lang/on-first-use.ts): queue.ts loads it on the first send, so that a cold start neither parses nor
 * evaluates the SQS client.
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import { config } from '#shared/config.ts';

export { SendMessageCommand } from '@aws-sdk/client-sqs';

export const sqs = new SQSClient({ region: config.region });
