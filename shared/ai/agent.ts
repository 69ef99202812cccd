/**
 * The AI agent: what the `ai` queue's worker does with each inbound message.
 *
 * 1. Debounce: the first delivery records the message as the conversation's newest inbound and re-queues
 *    itself for the business's debounce window; after it, only the newest inbound of the window answers,
 *    so several messages in a row get one reply (the model sees them all in the history).
 * 2. Decide: the contract's precedence (precedence.ts) on the global settings and the conversation, as the message
 *    came in and again now (a closed conversation is not answered either).
 * 3. Claim: a conditional marker per inbound message, so a redelivered job never replies twice.
 * 4. Mark the customer's message read and show the typing indicator (a failure there never stops the answer),
 *    ask the model with the conversation's recent history, check again that nothing changed meanwhile
 *    (a newer inbound, a human reply, a pause), and send the reply through the ordinary send path as `ai`.
 * Provider failures and time-outs throw: the claim is released and the queue retries the message.
 */
import * as v from 'valibot';
import { enqueue } from '#shared/queue/queue.ts';
import { logger } from '#shared/log/logger.ts';
import { aiConfig, DEFAULT_SYSTEM_PROMPT } from './config.ts';
import { getConversationAi } from './conversation-ai.ts';
import { effectiveModel } from './models.ts';
import { toTurns, type HistoryMessage } from './history.ts';
import { decide, type BlockReason } from './precedence.ts';
import type { ChatTurn, ModelProvider } from './providers/provider.ts';
import { claimReply, latestInbound, markNewestInbound, releaseClaim, settleClaim, type Claim } from './reply-state.ts';
import { getAiSettings, type AiSettings } from './settings.ts';

/** The message the upstream-events worker queues for every inbound message (the second delivery adds `phase`). */
export const aiJobSchema = v.object({
  businessId: v.pipe(v.string(), v.minLength(1)),
  conversationId: v.pipe(v.string(), v.minLength(1)),
  messageId: v.pipe(v.string(), v.minLength(1)),
  receivedAt: v.optional(v.union([v.string(), v.number()])),
  phase: v.optional(v.literal('answer')),
});
export type AiJob = v.InferOutput<typeof aiJobSchema>;

/** What the agent needs from the conversations and messages areas and from the model. */
export interface AgentPorts {
  /** The customer's number to reply to; undefined when the conversation is gone. */
  recipient(businessId: string, conversationId: string): Promise<string | undefined>;
  /** Recent messages of the conversation, oldest first, including the triggering inbound message. */
  history(businessId: string, conversationId: string, triggerMessageId: string, limit: number): Promise<HistoryMessage[]>;
  /**
   * Sends through the ordinary send path, marked as sent by the AI; `sent` false when the upstream refused it. Throws
   * ReplyNotSent when the reply was stored but the upstream was unavailable (the queue's retry sends it again).
   */
  send(businessId: string, conversationId: string, to: string, text: string): Promise<SendOutcome>;
  /** Sends a reply that ReplyNotSent named again (the message's retry), as `send` answers. */
  resend(businessId: string, replyId: string): Promise<SendOutcome>;
  /** Marks the inbound message read and shows the typing indicator while the model runs. */
  acknowledge(businessId: string, messageId: string): Promise<void>;
  provider(): ModelProvider;
}

export type SendOutcome = { sent: boolean; messageId?: string; error?: string };

/** How a job ends without a send. */
type Unanswered = Exclude<AgentOutcome, 'replied' | 'send_failed'>;

/** A reply stored but not sent, the upstream unavailable (throttled, 5xx): the queue's retry sends that same reply. */
export class ReplyNotSent extends Error {
  constructor(readonly replyId: string, options?: ErrorOptions) {
    super(`AI reply ${replyId} was stored but not sent: the upstream was unavailable`, options);
    this.name = 'ReplyNotSent';
  }
}

export type AgentOutcome = 'debounced' | 'superseded' | `blocked:${BlockReason | 'conversation_closed'}` | 'duplicate' | 'nothing_to_answer' | 'replied' | 'send_failed';

const toIso = (value: string | number | undefined, fallback: Date): string => {
  if (value === undefined) return fallback.toISOString();
  const ms = typeof value === 'number' ? (value < 1e12 ? value * 1000 : value) : /^\d+$/.test(value) ? Number(value) * (value.length <= 10 ? 1000 : 1) : Date.parse(value);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : fallback.toISOString();
};

/**
 * What keeps the AI from answering now: the contract's precedence, or a conversation closed since the message came in
 * (an agent closed it: the AI does not speak into it, nor open a new one with a reply the customer's message is not in).
 */
async function blockedBy(job: AiJob, settings: AiSettings, at: Date): Promise<BlockReason | 'conversation_closed' | 'no_conversation' | undefined> {
  const conversation = await getConversationAi(job.businessId, job.conversationId);
  if (!conversation) return 'no_conversation';
  if (conversation.closed) return 'conversation_closed';
  const decision = decide({ enabled: settings.enabled, pausedUntil: settings.pausedUntil }, conversation, at);
  return decision.answer ? undefined : decision.blockedBy;
}

const blockedOutcome = (reason: NonNullable<Awaited<ReturnType<typeof blockedBy>>>): Unanswered =>
  reason === 'no_conversation' ? 'nothing_to_answer' : `blocked:${reason}`;

export async function handleAiJob(job: AiJob, ports: AgentPorts, clock: () => Date = () => new Date()): Promise<AgentOutcome> {
  const settings = await getAiSettings(job.businessId);
  if (job.phase !== 'answer') {
    const receivedAt = toIso(job.receivedAt, clock());
    // The contract's conditions hold for the message as it comes in, now (this first delivery of its job follows its
    // webhook): one that comes in during a pause, or while the AI is off, stays unanswered when the block ends within the
    // debounce window (they are checked again before answering). Meta's timestamp is when the customer wrote, not that
    // moment: a message delivered late, after a pause ended (or written before it began), comes in with the AI active.
    // A blocked message is not recorded as the conversation's newest: an older one that comes in once the AI is active
    // again is answered, not superseded by one no job will answer.
    const blockedOnArrival = await blockedBy(job, settings, clock());
    if (blockedOnArrival) return blockedOutcome(blockedOnArrival);
    if (!(await markNewestInbound(job.businessId, job.conversationId, job.messageId, receivedAt))) return 'superseded';
    const answersNow = settings.debounceSeconds === 0;
    if (!answersNow) {
      await enqueue('ai', { ...job, receivedAt, phase: 'answer' }, { delaySeconds: settings.debounceSeconds });
      return 'debounced';
    }
    return answer(job, settings, ports, clock, { checkedNow: true });
  }
  return answer(job, settings, ports, clock);
}

/**
 * The model's turns for answering `messageId`: the history up to it. Only an inbound message of this very conversation
 * is answered (a job naming another conversation's or business's message must not make this one reply), and not one
 * that was replied to since: what the customer sent after the reply that is not a turn of its own (a reaction to it,
 * an edit) does not make it theirs to answer again. A newer turn of the customer supersedes the job before this.
 */
function turnsToAnswer(history: HistoryMessage[], messageId: string): ChatTurn[] {
  const at = history.findIndex((m) => m.id === messageId && m.direction === 'inbound');
  if (at < 0) return [];
  // The customer's messages since the business's last one are one turn, read in the order they were written (the
  // message answered, the last to come in, need not be the last written).
  let end = at;
  while (end + 1 < history.length && history[end + 1].direction === 'inbound') end++;
  if (history.slice(end + 1).some((m) => m.direction === 'outbound')) return [];
  return toTurns(history.slice(0, end + 1), aiConfig.historyLimit);
}

async function answer(job: AiJob, settings: AiSettings, ports: AgentPorts, clock: () => Date, { checkedNow = false } = {}): Promise<AgentOutcome> {
  const { businessId, conversationId, messageId } = job;
  if ((await latestInbound(businessId, conversationId)) !== messageId) return 'superseded';
  const blocked = checkedNow ? undefined : await blockedBy(job, settings, clock());
  if (blocked) return blockedOutcome(blocked);

  const claim = await claimReply(businessId, conversationId, messageId, clock());
  if (!claim) return 'duplicate';
  let result: SendOutcome | Unanswered;
  try {
    // An earlier delivery's reply is stored failed (the upstream was unavailable): that reply goes again, not a new one.
    result = claim.failedReplyId ? await ports.resend(businessId, claim.failedReplyId) : await composeAndSend(job, settings, claim, ports, clock);
  } catch (err) {
    await releaseClaim(businessId, claim, err instanceof ReplyNotSent ? err.replyId : claim.failedReplyId).catch(() => undefined);
    throw err;
  }
  if (typeof result === 'string') return result;
  // Sent: from here on nothing may throw, or a retry could reply a second time.
  await settleClaim(businessId, claim, result.sent ? 'replied' : 'failed', { sentMessageId: result.messageId, error: result.error })
    .catch((err) => logger.error('could not settle the AI reply marker', { businessId, messageId, error: err as Error }));
  if (!result.sent) logger.warn('AI reply refused upstream', { businessId, conversationId, error: result.error });
  return result.sent ? 'replied' : 'send_failed';
}

/** Asks the model for the answer and sends it, unless the conversation no longer wants one (the claim settled as skipped). */
async function composeAndSend(job: AiJob, settings: AiSettings, claim: Claim, ports: AgentPorts, clock: () => Date): Promise<SendOutcome | Unanswered> {
  const { businessId, conversationId, messageId } = job;
  const to = await ports.recipient(businessId, conversationId);
  const history = to ? await ports.history(businessId, conversationId, messageId, aiConfig.historyLimit) : [];
  const turns = turnsToAnswer(history, messageId);
  if (!to || turns.length === 0) {
    await settleClaim(businessId, claim, 'skipped', { reason: 'nothing_to_answer' });
    return 'nothing_to_answer';
  }
  await ports.acknowledge(businessId, messageId).catch((err) => logger.warn('AI could not mark the message read', { businessId, messageId, error: err as Error }));
  const text = await ports.provider().complete({ system: settings.systemPrompt ?? DEFAULT_SYSTEM_PROMPT, turns, model: effectiveModel(settings.model) });

  // The model took a while: a newer message, a human reply or a pause may have come in meanwhile.
  if ((await latestInbound(businessId, conversationId)) !== messageId) {
    await settleClaim(businessId, claim, 'skipped', { reason: 'superseded' });
    return 'superseded';
  }
  const nowBlocked = await blockedBy(job, await getAiSettings(businessId), clock());
  if (nowBlocked) {
    await settleClaim(businessId, claim, 'skipped', { reason: nowBlocked });
    return blockedOutcome(nowBlocked);
  }
  return ports.send(businessId, conversationId, to, text);
}
