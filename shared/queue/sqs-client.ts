/**
 * The SQS client, one per container, and the commands queue.ts sends with it. queue.ts imports this module on the
 * first send (inlined, see shared/lang/on-first-use.ts), so that a cold start does not evaluate the SQS client. Not a
 * side bundle: most requests that load it publish events, and a side bundle's own copy of the SDK core would cost
 * their first request more than the bytes it keeps out of index.mjs save at load.
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import { config } from '#shared/config.ts';

export { SendMessageBatchCommand, SendMessageCommand } from '@aws-sdk/client-sqs';

export const sqs = new SQSClient({ region: config.region });
