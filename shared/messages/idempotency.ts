/**
 * `Idempotency-Key` on sends: the first response of a send that recorded its message (success, or a delivery
 * failure) is kept for 24 hours and returned again for the same key without sending twice; the same key with a
 * different body is a 422. A request still running under the key answers 409. A request refused before anything
 * was recorded (a body the contract refuses, a limit, a crash) frees the key; once the send recorded its message
 * (bindToMessage, in the message's own transaction) the key is kept whatever happens after, and a repeat answers
 * with that message's outcome.
 */
import { createHash } from 'node:crypto';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { TransactItem } from '#shared/events/outbox.ts';
import { db, table } from '#shared/store/client.ts';
import { applied } from '#shared/store/conditional.ts';
import { keys } from '#shared/store/keys.ts';
import { UpstreamError } from '#shared/upstream/client.ts';
import { ApiError, validationError } from '#shared/http/errors.ts';

const TTL_SECONDS = 24 * 3600;

export interface Outcome {
  status: number;
  body: Record<string, unknown>;
  /** `Retry-After` of a failure the client may retry later. */
  headers?: Record<string, string>;
  /** The upstream's refusal the failure answers for, kept so that the Cloud API route answers a repeat as Meta answered. */
  upstream?: { status: number; graph: Record<string, unknown> };
}

/** Meta's own refusal behind an error, when there is one to keep (not a fault the service retried). */
function upstreamRefusal(err: ApiError): Outcome['upstream'] {
  const cause = err.cause;
  return cause instanceof UpstreamError && cause.graph && !cause.transient ? { status: cause.status, graph: cause.graph } : undefined;
}

const canonical = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(canonical)
    : value && typeof value === 'object'
      ? Object.fromEntries(Object.keys(value).sort().map((k) => [k, canonical((value as Record<string, unknown>)[k])]))
      : value;

const hashOf = (body: unknown) => createHash('sha256').update(JSON.stringify(canonical(body) ?? null)).digest('hex');

/** A repeat's answer, as the first request's, marked `idempotent-replayed: true` (Stripe's header) whether it succeeded or not. */
const replay = (o: Outcome): Outcome => {
  if (o.status < 400) return { ...o, headers: { ...o.headers, 'idempotent-replayed': 'true' } };
  const refusal = o.upstream
    ? new UpstreamError(String(o.upstream.graph.message ?? ''), o.upstream.status, Number(o.upstream.graph.code) || undefined, undefined, false, o.upstream.graph)
    : undefined;
  throw new ApiError(o.status, o.body, { ...o.headers, 'idempotent-replayed': 'true' }, refusal);
};

/** Ties a claimed key to the message its request records (part of the recording transaction). */
export const bindToMessage = (businessId: string, scope: string, key: string, messageId: string): TransactItem => ({
  Update: {
    TableName: table(),
    Key: keys.idempotency(businessId, scope, key),
    UpdateExpression: 'SET messageId = :id',
    ConditionExpression: 'attribute_exists(pk)',
    ExpressionAttributeValues: { ':id': messageId },
  },
});

/** Unties a key from a message whose recording was taken back (nothing went out): a repeat runs afresh. */
export const unbindFromMessage = (businessId: string, scope: string, key: string, messageId: string): TransactItem => ({
  Update: {
    TableName: table(),
    Key: keys.idempotency(businessId, scope, key),
    UpdateExpression: 'REMOVE messageId',
    ConditionExpression: 'messageId = :id',
    ExpressionAttributeValues: { ':id': messageId },
  },
});

/**
 * Runs `run` once per key. `resume` answers a repeat of a request that recorded a message and then died
 * before its answer was kept: the message's outcome, or undefined while it is still in flight (409).
 */
export async function idempotent(
  businessId: string,
  scope: string,
  key: string,
  requestBody: unknown,
  run: () => Promise<Outcome>,
  resume?: (messageId: string) => Promise<Outcome | undefined>,
): Promise<Outcome> {
  if (key.length === 0 || key.length > 255) throw validationError({ 'Idempotency-Key': ['must be 1 to 255 characters'] }, 'Invalid Idempotency-Key header');
  const Key = keys.idempotency(businessId, scope, key);
  const hash = hashOf(requestBody);
  const nowS = Math.floor(Date.now() / 1000);
  const claimed = await applied(db.send(new PutCommand({
    TableName: table(),
    Item: { ...Key, type: 'idempotency', state: 'pending', hash, ttl: nowS + TTL_SECONDS, createdAt: new Date().toISOString() },
    ConditionExpression: 'attribute_not_exists(pk) OR #ttl < :now',
    ExpressionAttributeNames: { '#ttl': 'ttl' },
    ExpressionAttributeValues: { ':now': nowS },
  })));
  if (!claimed) {
    const { Item } = await db.send(new GetCommand({ TableName: table(), Key, ConsistentRead: true }));
    if (!Item) return idempotent(businessId, scope, key, requestBody, run, resume);
    if (Item.hash !== hash) {
      throw new ApiError(422, { error: 'idempotency_key_reused', message: 'This Idempotency-Key was used with a different request body in the last 24 hours' });
    }
    const resumed = Item.state !== 'done' && typeof Item.messageId === 'string' && resume ? await resume(Item.messageId) : undefined;
    if (resumed) return replay(resumed);
    if (Item.state !== 'done') throw new ApiError(409, { error: 'idempotency_in_progress', message: 'A request with this Idempotency-Key is still being processed' }, { 'Retry-After': '1' });
    return replay({ status: Item.status, body: Item.body, ...(Item.upstream ? { upstream: Item.upstream } : {}) });
  }

  let outcome: Outcome;
  try {
    outcome = await run();
  } catch (err) {
    // Nothing recorded under the key (a body refused, a limit of this minute, a crash before the record): the key is
    // free for the corrected or repeated request, as Stripe frees a key whose parameters failed validation.
    const freed = await applied(db.send(new DeleteCommand({ TableName: table(), Key, ConditionExpression: 'attribute_not_exists(messageId)' }))).catch(() => false);
    // A message was recorded (it may be out already): a client error is its answer for good; after a crash the
    // repeat answers with the message's outcome.
    if (!freed && err instanceof ApiError && err.status < 500 && err.status !== 429) {
      const upstream = upstreamRefusal(err);
      await save(Key, { status: err.status, body: err.body, ...(upstream ? { upstream } : {}) });
    }
    throw err;
  }
  await save(Key, outcome);
  return outcome;
}

const save = (Key: Record<string, string>, o: Outcome) =>
  db.send(new UpdateCommand({
    TableName: table(),
    Key,
    UpdateExpression: `SET #state = :done, #status = :status, body = :body${o.upstream ? ', upstream = :upstream' : ''}`,
    ExpressionAttributeNames: { '#state': 'state', '#status': 'status' },
    ExpressionAttributeValues: { ':done': 'done', ':status': o.status, ':body': o.body, ...(o.upstream ? { ':upstream': o.upstream } : {}) },
  }));
