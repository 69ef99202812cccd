/**
 * The states of an outbound send and the conditional writes that move it, so that a message is recorded
 * before it goes upstream and exactly one writer settles each attempt:
 *
 *   record   (new, or queued with nobody sending it)  → queued, with a send attempt and its in-flight marker
 *   claim    (failed, nobody sending it: a retry)     → queued, with a send attempt and its in-flight marker
 *   settle   (queued: the attempt's own answer, or a status webhook naming the message) → sent | failed
 *   release  (the media area takes a refused send over) → queued, nobody sending it
 *
 * The in-flight marker (`PSEND#{messageId}`) exists exactly while an attempt is open: recorded and removed in
 * the same transactions as the message, it is how the sweep (pending-sweep.ts) finds a send whose answer was
 * lost. Every settle carries its event's outbox item, so `message.sent` / `message.failed` is emitted once.
 */
import { randomUUID } from 'node:crypto';
import { newEvent, type TransactItem } from '#shared/events/outbox.ts';
import { table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';
import { cancellationCodes } from '#shared/store/transact.ts';
import { getConversation, type Conversation } from '#shared/conversations/repository.ts';
import { commitWithRetry } from './transact.ts';
import { messageOwnerPut, messagePut, wamidPut, type Message, type MessageError } from './repository.ts';
import { clientCallbackData, eventData } from './events.ts';

export const newAttempt = (): string => randomUUID();

const markerPut = (m: Pick<Message, 'businessId' | 'id' | 'createdAt'>, attempt: string, at: string): TransactItem => ({
  Put: {
    TableName: table(),
    Item: { ...keys.pendingSend(m.businessId, m.id), ...keys.pendingSendIndex(m.businessId, m.id, at), type: 'pendingSend', businessId: m.businessId, messageId: m.id, attempt, startedAt: at },
  },
});

const markerDelete = (businessId: string, messageId: string): TransactItem => ({ Delete: { TableName: table(), Key: keys.pendingSend(businessId, messageId) } });

/** How many items of the recording transaction come before the caller's checks. */
export const RECORD_ITEMS = 3;

/** Records a queued message with an open attempt: a new message, or a queued one (the media area's 202) that nobody is sending. */
export const recordItems = (message: Message, attempt: string, checks: TransactItem[] = []): TransactItem[] => [
  messagePut({ ...message, status: 'queued', sendAttempt: attempt }, {
    ConditionExpression: 'attribute_not_exists(pk) OR (#status = :queued AND attribute_not_exists(sendAttempt))',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: { ':queued': 'queued' },
  }),
  messageOwnerPut(message),
  markerPut(message, attempt, message.updatedAt),
  ...checks,
];

/** A retry's claim: only one caller moves a failed message to queued; everyone else sees the condition fail. */
export const claimItems = (message: Message, attempt: string, at: string): TransactItem[] => [
  {
    Update: {
      TableName: table(),
      Key: keys.message(message.businessId, message.id),
      UpdateExpression: 'SET #status = :queued, sendAttempt = :attempt, updatedAt = :at',
      ConditionExpression: '#status = :failed AND attribute_not_exists(sendAttempt)',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':queued': 'queued', ':failed': 'failed', ':attempt': attempt, ':at': at },
    },
  },
  markerPut(message, attempt, at),
];

/**
 * How many items of a settle come before the caller's own (the first of which is the conversation's touch): a sent
 * one writes the message, its wamid pointer and the marker's delete; a failed one the message and the marker's delete.
 */
export const SETTLE_ITEMS = { sent: 3, failed: 2 } as const;

/**
 * Runs a settle (`kind`) whose first own item touches the conversation without having read it (`unread`); when that
 * touch's conditions do not hold (a later message, a longer running AI pause), reads the conversation and
 * settles again with the touch made from the read (`read`).
 */
export async function withConversationTouch<T>(
  businessId: string,
  conversationId: string,
  kind: keyof typeof SETTLE_ITEMS,
  settle: (touch: TransactItem) => Promise<T>,
  unread: () => TransactItem,
  read: (current: Conversation) => TransactItem,
): Promise<T> {
  try {
    return await settle(unread());
  } catch (err) {
    if (cancellationCodes(err)?.[SETTLE_ITEMS[kind]] !== 'ConditionalCheckFailed') throw err;
    const current = await getConversation(businessId, conversationId);
    if (!current) throw err;
    return settle(read(current));
  }
}

/** True when a cancelled transaction failed on its first item (the message's own condition). */
export const messageConditionFailed = (err: unknown): boolean => cancellationCodes(err)?.[0] === 'ConditionalCheckFailed';

interface Settle {
  message: Message;
  /** The attempt being settled; undefined settles whatever attempt is open (a status webhook, the sweep). */
  attempt?: string;
  at: string;
  /** More SETs on the message (e.g. retriedAt) with their values. */
  sets?: Record<string, unknown>;
  /** Other items of the same unit of work (conversation touch, reaction). */
  items?: TransactItem[];
  /** More fields of the event. */
  eventExtra?: Record<string, unknown>;
  /** Counts a retry (retryCount). */
  retry?: boolean;
  /** Whether the settle emits its event (a failed retry keeps the message failed without one). */
  emit?: boolean;
  /**
   * The status settled from: `queued` (an attempt's answer, a status webhook, the sweep), or `failed` for a send the
   * upstream did accept after all (its status webhook names it), while no retry of it is under way.
   */
  from?: 'queued' | 'failed';
}

function messageUpdate(s: Settle, status: 'sent' | 'failed', fields: Record<string, unknown>): TransactItem {
  const all: Record<string, unknown> = { ...fields, ...s.sets, updatedAt: s.at };
  const names: Record<string, string> = { '#status': 'status' };
  const values: Record<string, unknown> = { ':status': status, ':from': s.from ?? 'queued' };
  const sets = ['#status = :status'];
  Object.entries(all).forEach(([field, value], i) => {
    names[`#f${i}`] = field;
    values[`:f${i}`] = value;
    sets.push(`#f${i} = :f${i}`);
  });
  if (s.attempt) values[':attempt'] = s.attempt;
  if (s.retry) values[':one'] = 1;
  return {
    Update: {
      TableName: table(),
      Key: keys.message(s.message.businessId, s.message.id),
      UpdateExpression: `SET ${sets.join(', ')} REMOVE sendAttempt${s.retry ? ' ADD retryCount :one' : ''}`,
      ConditionExpression: s.attempt ? '#status = :from AND sendAttempt = :attempt' : s.from === 'failed' ? '#status = :from AND attribute_not_exists(sendAttempt)' : '#status = :from',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    },
  };
}

/**
 * Settles the message as sent with its wamid (pointer, event). Returns false when it was settled already
 * (a status webhook got there first, or the sweep): that write, not this one, carried the event.
 */
export async function settleSent(s: Settle & { wamid: string; waId: string | null }): Promise<boolean> {
  const sent: Message = { ...s.message, status: 'sent', wamid: s.wamid, waId: s.waId, sentAt: s.at, updatedAt: s.at, error: null };
  try {
    await commitWithRetry(
      [
        messageUpdate(s, 'sent', { wamid: s.wamid, waId: s.waId, sentAt: s.at, error: null }),
        wamidPut(s.wamid, s.message.businessId, s.message.id),
        markerDelete(s.message.businessId, s.message.id),
        ...(s.items ?? []),
      ],
      [newEvent(s.message.businessId, 'message.sent', eventData(sent, {
        sent_by: s.message.sentBy ?? 'api',
        sent_at: s.at,
        content: sent.content ?? sent.payload[sent.messageType],
        ...clientCallbackData(sent),
        ...s.eventExtra,
      }))],
    );
    return true;
  } catch (err) {
    if (messageConditionFailed(err)) return false;
    throw err;
  }
}

/** Settles the message as failed with the contract's error. False when it was settled already. */
export async function settleFailed(s: Settle & { error: MessageError }): Promise<boolean> {
  const failed: Message = { ...s.message, status: 'failed', failedAt: s.at, updatedAt: s.at, error: s.error };
  try {
    await commitWithRetry(
      [messageUpdate(s, 'failed', { failedAt: s.at, error: s.error }), markerDelete(s.message.businessId, s.message.id), ...(s.items ?? [])],
      s.emit === false ? [] : [newEvent(s.message.businessId, 'message.failed', eventData(failed, { sent_by: s.message.sentBy ?? 'api', failed_at: s.at, error: s.error, ...clientCallbackData(failed) }))],
    );
    return true;
  } catch (err) {
    if (messageConditionFailed(err)) return false;
    throw err;
  }
}

/** The condition of every write that closes an attempt: the message is still queued under `attempt` (nobody settled it). */
const openAttempt = (attempt: string, values: Record<string, unknown> = {}) => ({
  ConditionExpression: '#status = :queued AND sendAttempt = :attempt',
  ExpressionAttributeNames: { '#status': 'status' },
  ExpressionAttributeValues: { ':queued': 'queued', ':attempt': attempt, ...values },
});

/**
 * Takes back a recording whose send was refused before it went out (the business budget): the message never
 * existed for anyone (no event was written), so it goes, with its marker.
 */
export const discardItems = (message: Pick<Message, 'businessId' | 'id'>, attempt: string): TransactItem[] => [
  { Delete: { TableName: table(), Key: keys.message(message.businessId, message.id), ...openAttempt(attempt) } },
  markerDelete(message.businessId, message.id),
];

/** Closes the open attempt with `update` and drops its marker. */
const closeAttempt = (message: Pick<Message, 'businessId' | 'id'>, attempt: string, update: string, values: Record<string, unknown>): TransactItem[] => [
  { Update: { TableName: table(), Key: keys.message(message.businessId, message.id), UpdateExpression: update, ...openAttempt(attempt, values) } },
  markerDelete(message.businessId, message.id),
];

/** Gives a claimed message back to `failed` (a retry refused by the business budget before it went out). */
export const unclaimItems = (message: Pick<Message, 'businessId' | 'id'>, attempt: string, at: string): TransactItem[] =>
  closeAttempt(message, attempt, 'SET #status = :failed, updatedAt = :at REMOVE sendAttempt', { ':failed': 'failed', ':at': at });

/** Closes an attempt without an outcome: the message stays queued for the media area, which sends it later. */
export const releaseItems = (message: Pick<Message, 'businessId' | 'id'>, attempt: string, at: string): TransactItem[] =>
  closeAttempt(message, attempt, 'SET updatedAt = :at REMOVE sendAttempt', { ':at': at });
