/**
 * An outbound message on its way: what the send path resolved (number, contact, conversation, payload) and
 * the stored message and Send result made from it. The lowest module of the send path: the dispatch step, the
 * media step (shared/media/outbound.ts) and the media worker's finisher all build on it.
 */
import type { Conversation } from '#shared/conversations/repository.ts';
import type { TransactItem } from '#shared/events/outbox.ts';
import type { UpstreamPayload } from './payload.ts';
import type { Message, SendAiControl, SentBy } from './repository.ts';

export interface OutboundDraft {
  id: string;
  businessId: string;
  phoneNumberId: string;
  conversation: Conversation;
  contactId: string;
  to: string;
  /** The recipient exactly as the request wrote it (the Send result's `contacts[].input`). */
  input?: string;
  messageType: string;
  payload: UpstreamPayload;
  metadata?: Record<string, unknown>;
  sentBy: SentBy;
  broadcastId?: string;
  createdAt: string;
  ai?: SendAiControl;
  /** A media send's `autoConvert`: kept with the message, so that a retry prepares its link as the first send did. */
  autoConvert?: boolean;
  /** A reaction to a message the service knows: its current reaction is replaced (or removed by an empty emoji). */
  reactionTo?: { messageId: string; emoji: string };
  /** True while `conversation` holds only its id (the fast path reads it only if a settle's conditions need it). */
  conversationUnread?: boolean;
  /** A human reply through the API pauses the AI in the conversation until then (AI handoff). */
  handoffPauseUntil?: string;
  /**
   * Conditions the recording transaction checks, so that what the send path looked up without reading it
   * again (the send route) still holds when the message is recorded.
   */
  checks?: TransactItem[];
}

export interface SendResult {
  messaging_product: 'whatsapp';
  contacts: { input: string; wa_id: string }[];
  messages: { id: string; wamid: string | null }[];
  data: {
    id: string;
    conversationId: string;
    messageType: string;
    direction: 'outbound';
    status: string;
    createdAt: string;
    metadata?: Record<string, unknown>;
  };
}

const digitsOf = (phone: string) => phone.replace(/\D/g, '');

/** Until when a sent message's `ai.pause` pauses the AI, counted from now (its pauseDuration, default 5 minutes). */
const ownAiPause = (ai: SendAiControl | undefined): string | undefined =>
  ai?.pause ? new Date(Date.now() + (ai.pauseDuration ?? 5) * 60_000).toISOString() : undefined;

/**
 * Until when a person's reply through the API without an `ai` object hands the conversation over (the business's
 * `handoffPauseMinutes`, counted from now); undefined for an AI or broadcast message, one with its own `ai` object, or no handoff.
 */
export const handoffPauseOf = (sentBy: SentBy | undefined, ai: SendAiControl | undefined, handoffPauseMinutes: number): string | undefined =>
  (sentBy ?? 'api') === 'api' && !ai && handoffPauseMinutes > 0 ? new Date(Date.now() + handoffPauseMinutes * 60_000).toISOString() : undefined;

/**
 * What a sent message does to its conversation's AI: its `ai.disable`, and its own `ai.pause` or else the handoff pause,
 * which only lengthens a running pause: against the conversation as read (`current`), or as the touch's conditions when
 * it was not read.
 */
export function aiAfterSend(ai: SendAiControl | undefined, handoffPauseUntil: string | undefined, current?: Pick<Conversation, 'aiPausedUntil'>) {
  const own = ownAiPause(ai);
  const aiDisable = ai?.disable === true;
  if (!current) return { aiDisable, aiPausedUntil: own, lengthenAiPauseTo: own ? undefined : handoffPauseUntil };
  const running = current.aiPausedUntil;
  return { aiDisable, aiPausedUntil: own ?? (handoffPauseUntil && (!running || running < handoffPauseUntil) ? handoffPauseUntil : undefined) };
}

/** The stored message of an outbound draft, in the given status (queued while it is being sent, failed). */
export const outboundMessage = (draft: OutboundDraft, now: string, status: Message['status'] = 'queued'): Message => ({
  id: draft.id,
  businessId: draft.businessId,
  conversationId: draft.conversation.id,
  contactId: draft.contactId,
  direction: 'outbound',
  messageType: draft.messageType,
  status,
  wamid: null,
  phoneNumber: draft.to,
  waId: digitsOf(draft.to),
  payload: draft.payload,
  ...(draft.metadata ? { metadata: draft.metadata } : {}),
  sentBy: draft.sentBy,
  ...(draft.broadcastId ? { broadcastId: draft.broadcastId } : {}),
  ...(draft.autoConvert ? { autoConvert: true } : {}),
  ...(draft.ai ? { ai: draft.ai } : {}),
  error: null,
  createdAt: draft.createdAt,
  updatedAt: now,
});

/** The contract's Send result for a message (and the recipient as the request wrote it, when known). */
export const sendResult = (m: Pick<Message, 'id' | 'conversationId' | 'messageType' | 'status' | 'createdAt' | 'wamid' | 'waId' | 'phoneNumber' | 'metadata'>, input?: string): SendResult => ({
  messaging_product: 'whatsapp',
  contacts: [{ input: input ?? m.phoneNumber ?? '', wa_id: m.waId || digitsOf(m.phoneNumber ?? '') }],
  messages: [{ id: m.id, wamid: m.wamid }],
  data: {
    id: m.id,
    conversationId: m.conversationId,
    messageType: m.messageType,
    direction: 'outbound',
    status: m.status,
    createdAt: m.createdAt,
    ...(m.metadata ? { metadata: m.metadata } : {}),
  },
});
