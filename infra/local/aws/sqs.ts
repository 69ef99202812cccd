/**
 * A local stand-in for Amazon SQS, at the SQS client's endpoint (`AWS_ENDPOINT_URL_SQS`), speaking the wire
 * protocol of @aws-sdk/client-sqs 3.1169: AWS JSON 1.0 (`POST /`, `X-Amz-Target: AmazonSQS.<Action>`).
 *
 * It answers exactly the calls the service makes, `SendMessage` and `SendMessageBatch` (with `DelaySeconds` and
 * String `MessageAttributes`), with SQS's own checks (known queue URL, a body, delay 0–900 s, at most 10
 * attributes, 1 MiB per message; a batch of 1–10 entries with distinct ids, 1 MiB in all, each entry failing on
 * its own in `Failed`) and the `MD5OfMessageBody` the SDK verifies. Any other action is refused, so a new call in
 * service code fails here first instead of silently passing.
 *
 * Messages stay in their queue until taken: by the worker pump (infra/local/queues.ts, the stand-in for Lambda's
 * event source mapping) or by a test (`messages`, `take`). Queues live in memory only, like the rest of the
 * local runtime.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { listen, readBody, replyJson } from './wire.ts';

/** The account and region local ARNs and URLs use. */
export const LOCAL_ACCOUNT = '000000000000';
export const LOCAL_REGION = 'us-east-1';
const MAX_DELAY_SECONDS = 900;
const MAX_ATTRIBUTES = 10;
const MAX_MESSAGE_BYTES = 1024 * 1024;

export interface QueuedMessage {
  messageId: string;
  body: string;
  /** String message attributes, by name. */
  attributes: Record<string, string>;
  md5OfBody: string;
  sentAt: number;
  /** Not received before this time (DelaySeconds, or a failed receive's visibility timeout). */
  visibleAt: number;
  receiveCount: number;
}

export interface SendOptions {
  delaySeconds?: number;
  attributes?: Record<string, string>;
}

// No TypeScript parameter properties in this folder: the test run's global setup loads it with Node's type stripping.
class SqsError extends Error {
  readonly type: string;
  readonly queryCode: string;
  constructor(type: string, message: string, queryCode = type) {
    super(message);
    this.type = type;
    this.queryCode = queryCode;
  }
}

export class SqsStandIn {
  private readonly queues = new Map<string, QueuedMessage[]>();
  private readonly listeners: ((queue: string) => void)[] = [];
  private requestsInProgress = 0;
  private readonly answered = new Map<string, number>();

  readonly endpoint: string;
  readonly close: () => Promise<void>;

  private constructor(endpoint: string, names: readonly string[], close: () => Promise<void>) {
    this.endpoint = endpoint;
    this.close = close;
    for (const name of names) this.queues.set(name, []);
  }

  /** Starts the stand-in on `port` (0: a free one) with one queue per name. */
  static async start(names: readonly string[], port = 0): Promise<SqsStandIn> {
    let standIn: SqsStandIn | undefined;
    const server = await listen(port, (req, res) => void standIn!.handle(req, res));
    standIn = new SqsStandIn(server.url, names, server.close);
    return standIn;
  }

  queueUrl(name: string): string {
    return `${this.endpoint}/${LOCAL_ACCOUNT}/${name}`;
  }

  queueArn(name: string): string {
    return `arn:aws:sqs:${LOCAL_REGION}:${LOCAL_ACCOUNT}:${name}`;
  }

  /** The queue an ARN names (EventBridge Scheduler targets queues by ARN), or undefined. */
  queueOfArn(arn: string): string | undefined {
    const name = /^arn:aws:sqs:[^:]+:\d{12}:([^:]+)$/.exec(arn)?.[1];
    return name && this.queues.has(name) ? name : undefined;
  }

  /** Calls `listener(queue)` whenever a message arrives (the pump wakes on it). */
  onMessage(listener: (queue: string) => void): void {
    this.listeners.push(listener);
  }

  /** The messages waiting in `queue` (visible or delayed), oldest first. */
  messages(queue: string): readonly QueuedMessage[] {
    return this.list(queue);
  }

  /** Removes and answers every message waiting in `queue` (a test consuming by hand). */
  take(queue: string): QueuedMessage[] {
    return this.list(queue).splice(0);
  }

  /** Removes and answers up to `max` messages of `queue` that are visible now, and counts the receive. */
  receive(queue: string, max: number, now = Date.now()): QueuedMessage[] {
    const list = this.list(queue);
    const batch: QueuedMessage[] = [];
    for (let i = 0; i < list.length && batch.length < max; ) {
      if (list[i].visibleAt <= now) batch.push(...list.splice(i, 1));
      else i++;
    }
    for (const m of batch) m.receiveCount++;
    return batch;
  }

  /** Puts a received message back, visible again at `visibleAt` (its visibility timeout ran out). */
  release(queue: string, message: QueuedMessage, visibleAt: number): void {
    message.visibleAt = visibleAt;
    this.list(queue).push(message);
  }

  /** Requests of an action (`AmazonSQS.SendMessage`...) answered so far, refused ones included. */
  requests(action: string): number {
    return this.answered.get(action) ?? 0;
  }

  /** Requests being read or answered right now (their messages may not be queued yet). */
  get busy(): number {
    return this.requestsInProgress;
  }

  /** Queues a message as SendMessage does; the in-process path of the Scheduler stand-in. */
  send(queue: string, body: string, options: SendOptions = {}): QueuedMessage {
    const list = this.list(queue);
    const delay = options.delaySeconds ?? 0;
    if (!Number.isInteger(delay) || delay < 0 || delay > MAX_DELAY_SECONDS) {
      throw new SqsError('InvalidParameterValue', `Value ${delay} for parameter DelaySeconds is invalid. Reason: must be between 0 and ${MAX_DELAY_SECONDS}.`);
    }
    const attributes = options.attributes ?? {};
    if (Object.keys(attributes).length > MAX_ATTRIBUTES) throw new SqsError('InvalidParameterValue', `Number of message attributes exceeds ${MAX_ATTRIBUTES}.`);
    const size = Buffer.byteLength(body) + Object.entries(attributes).reduce((n, [k, val]) => n + Buffer.byteLength(k) + Buffer.byteLength(val) + 'String'.length, 0);
    if (size > MAX_MESSAGE_BYTES) throw new SqsError('InvalidParameterValue', `Message must be shorter than ${MAX_MESSAGE_BYTES} bytes.`);
    const now = Date.now();
    const message: QueuedMessage = {
      messageId: randomUUID(),
      body,
      attributes,
      md5OfBody: createHash('md5').update(body).digest('hex'),
      sentAt: now,
      visibleAt: now + delay * 1000,
      receiveCount: 0,
    };
    list.push(message);
    for (const listener of this.listeners) listener(queue);
    return message;
  }

  private list(queue: string): QueuedMessage[] {
    const list = this.queues.get(queue);
    if (!list) throw new SqsError('QueueDoesNotExist', `The specified queue ${queue} does not exist.`, 'AWS.SimpleQueueService.NonExistentQueue');
    return list;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.requestsInProgress++;
    try {
      const target = String(req.headers['x-amz-target'] ?? '');
      this.answered.set(target, (this.answered.get(target) ?? 0) + 1);
      const raw = await readBody(req);
      const action = req.method === 'POST' ? actions[target] : undefined;
      if (!action) {
        throw new SqsError('UnsupportedOperation', `The local SQS stand-in answers ${Object.keys(actions).join(' and ')} only, not "${target || `${req.method} ${req.url}`}".`);
      }
      replyJson(res, 200, action(this, JSON.parse(raw || '{}')), { 'content-type': 'application/x-amz-json-1.0' });
    } catch (err) {
      const e = err instanceof SqsError ? err : new SqsError('InvalidParameterValue', (err as Error).message);
      replyJson(res, 400, { __type: `com.amazonaws.sqs#${e.type}`, message: e.message }, {
        'content-type': 'application/x-amz-json-1.0',
        'x-amzn-query-error': `${e.queryCode};Sender`,
      });
    } finally {
      this.requestsInProgress--;
    }
  }

  /** The queue a QueueUrl names; SQS's error for any other. */
  queueOfUrl(url: unknown): string {
    const match = typeof url === 'string' ? /^https?:\/\/[^/]+\/(\d{12})\/([^/?#]+)$/.exec(url) : null;
    if (!match || match[1] !== LOCAL_ACCOUNT || !this.queues.has(match[2])) {
      throw new SqsError('QueueDoesNotExist', `The specified queue ${String(url)} does not exist.`, 'AWS.SimpleQueueService.NonExistentQueue');
    }
    return match[2];
  }
}

interface MessageInput {
  MessageBody?: unknown;
  DelaySeconds?: number;
  MessageAttributes?: Record<string, { DataType?: string; StringValue?: string }>;
}
interface SendMessageInput extends MessageInput {
  QueueUrl?: unknown;
}
interface SendMessageBatchInput {
  QueueUrl?: unknown;
  Entries?: (MessageInput & { Id?: unknown })[];
}

const MAX_BATCH_ENTRIES = 10;
const BATCH_ENTRY_ID = /^[A-Za-z0-9_-]{1,80}$/;

const sendOne = (sqs: SqsStandIn, queue: string, input: MessageInput) =>
  sqs.send(queue, requireBody(input.MessageBody), { delaySeconds: input.DelaySeconds, attributes: stringAttributes(input.MessageAttributes) });

/** The actions the stand-in answers, by `X-Amz-Target`: each takes the request's JSON and answers the response's. */
// The parsed JSON body, read by each action as its own input shape (SQS checks each member it uses).
const actions: Record<string, (sqs: SqsStandIn, input: any) => unknown> = {
  'AmazonSQS.SendMessage': (sqs, input: SendMessageInput) => {
    const message = sendOne(sqs, sqs.queueOfUrl(input.QueueUrl), input);
    return { MessageId: message.messageId, MD5OfMessageBody: message.md5OfBody };
  },
  'AmazonSQS.SendMessageBatch': (sqs, input: SendMessageBatchInput) => {
    const queue = sqs.queueOfUrl(input.QueueUrl);
    const entries = Array.isArray(input.Entries) ? input.Entries : [];
    if (entries.length === 0) throw new SqsError('EmptyBatchRequest', 'There should be at least one SendMessageBatchRequestEntry in the request.', 'AWS.SimpleQueueService.EmptyBatchRequest');
    if (entries.length > MAX_BATCH_ENTRIES) throw new SqsError('TooManyEntriesInBatchRequest', `Maximum number of entries per request are ${MAX_BATCH_ENTRIES}. You have sent ${entries.length}.`, 'AWS.SimpleQueueService.TooManyEntriesInBatchRequest');
    const ids = entries.map((e) => e.Id);
    if (ids.some((id) => typeof id !== 'string' || !BATCH_ENTRY_ID.test(id))) throw new SqsError('InvalidBatchEntryId', 'A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.', 'AWS.SimpleQueueService.InvalidBatchEntryId');
    if (new Set(ids).size !== ids.length) throw new SqsError('BatchEntryIdsNotDistinct', 'Two or more batch entries in the request have the same Id.', 'AWS.SimpleQueueService.BatchEntryIdsNotDistinct');
    const total = entries.reduce((n, e) => n + (typeof e.MessageBody === 'string' ? Buffer.byteLength(e.MessageBody) : 0), 0);
    if (total > MAX_MESSAGE_BYTES) throw new SqsError('BatchRequestTooLong', `Batch requests cannot be longer than ${MAX_MESSAGE_BYTES} bytes.`, 'AWS.SimpleQueueService.BatchRequestTooLong');
    const Successful: unknown[] = [];
    const Failed: unknown[] = [];
    for (const entry of entries) {
      try {
        const message = sendOne(sqs, queue, entry);
        Successful.push({ Id: entry.Id, MessageId: message.messageId, MD5OfMessageBody: message.md5OfBody });
      } catch (err) {
        const e = err instanceof SqsError ? err : new SqsError('InvalidParameterValue', (err as Error).message);
        Failed.push({ Id: entry.Id, SenderFault: true, Code: e.type, Message: e.message });
      }
    }
    return { Successful, Failed };
  },
};

function requireBody(body: unknown): string {
  if (typeof body !== 'string' || body === '') throw new SqsError('MissingParameter', 'The request must contain the parameter MessageBody.');
  return body;
}

/** Only String attributes: the only kind the service sends. */
function stringAttributes(attributes: SendMessageInput['MessageAttributes']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (value?.DataType !== 'String' || typeof value.StringValue !== 'string') {
      throw new SqsError('InvalidParameterValue', `Message attribute ${name}: the local stand-in takes String attributes only.`);
    }
    out[name] = value.StringValue;
  }
  return out;
}
