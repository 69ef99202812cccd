/** The conversation's recent messages as the model's history (messages area repository). */
import { getMessage, listMessages, type Message } from '#shared/messages/repository.ts';
import type { HistoryMessage } from './history.ts';

const str = (x: unknown): string | undefined => (typeof x === 'string' && x.trim() ? x : undefined);

/** What the model reads for one message: its text, or a short note of what it was. */
export function messageText(m: Pick<Message, 'messageType' | 'content' | 'payload'>): string {
  const c = (m.content ?? {}) as Record<string, any>;
  const p = (m.payload ?? {}) as Record<string, any>;
  const type = String(m.messageType);
  if (type === 'text') return str(c.body) ?? str(p.text?.body) ?? str(c) ?? '';
  if (['image', 'video', 'audio', 'document', 'sticker'].includes(type)) {
    const caption = str(c.caption) ?? str(p[type]?.caption);
    return caption ? `[${type}] ${caption}` : `[${type}]`;
  }
  if (type === 'template') return `[template ${str(c.name) ?? str(p.template?.name) ?? ''}]`.replace(' ]', ']');
  if (type === 'interactive' || type === 'button') {
    const reply = p.interactive?.button_reply ?? p.interactive?.list_reply ?? c.button_reply ?? c.list_reply;
    return str(reply?.title) ?? str(p.button?.text) ?? str(c.text) ?? `[${type}]`;
  }
  if (type === 'location') return `[location ${c.latitude ?? p.location?.latitude},${c.longitude ?? p.location?.longitude}]`;
  return `[${type}]`;
}

/**
 * When a message joined the conversation. An inbound message's createdAt is the upstream's timestamp (whole seconds,
 * and late or early when Meta delivers late or its clock differs); the moment the service stored it (updatedAt,
 * milliseconds, never changed after) orders it truly among the others, as the AI's newest message is told.
 */
const arrival = (m: Message): string => (m.direction === 'inbound' && m.updatedAt ? m.updatedAt : m.createdAt);

export async function conversationHistory(businessId: string, conversationId: string, triggerMessageId: string, limit: number): Promise<HistoryMessage[]> {
  const { messages } = await listMessages(businessId, conversationId, limit);
  const recent = messages.reverse();
  // The index is eventually consistent: make sure the message being answered is there.
  if (!recent.some((m) => m.id === triggerMessageId)) {
    const trigger = await getMessage(businessId, triggerMessageId);
    if (trigger && trigger.conversationId === conversationId) recent.push(trigger);
  }
  // A message that never reached the customer is not part of what they saw.
  return inReadingOrder(recent.filter((m) => m.status !== 'failed')).map((m) => ({ id: m.id, direction: m.direction, text: messageText(m) }));
}

const byArrival = (a: Message, b: Message): number => arrival(a).localeCompare(arrival(b)) || a.id.localeCompare(b.id);

/**
 * The order the model reads: as the messages came in, except that the customer's messages between two of the business's
 * read in the order the customer wrote them (Meta's timestamp, then as they came in), however their webhooks were
 * delivered and stored.
 */
function inReadingOrder(messages: Message[]): Message[] {
  const ordered: Message[] = [];
  let run: Message[] = [];
  const endRun = () => {
    ordered.push(...run.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || byArrival(a, b)));
    run = [];
  };
  for (const m of [...messages].sort(byArrival)) {
    if (m.direction === 'inbound') {
      run.push(m);
    } else {
      endRun();
      ordered.push(m);
    }
  }
  endRun();
  return ordered;
}
