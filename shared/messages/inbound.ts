/**
 * Incoming customer messages from upstream webhooks: stored once (the wamid pointer makes a duplicate
 * delivery a no-op), with the contact and conversation created when new, the 24-hour window opened, and
 * `message.received` emitted with the message in the upstream's own format. The AI worker is then asked
 * whether to answer, when the message is a customer's turn (shared/ai/customer-turn.ts).
 */
import { MAX_E164_DIGITS } from '#shared/contacts/phone.ts';
import { uuidv7 } from 'uuidv7';
import { newEvent } from '#shared/events/outbox.ts';
import { commitWithRetry } from './transact.ts';
import { cancellationCodes, isTransactionCancelled } from '#shared/store/transact.ts';
import { enqueue } from '#shared/queue/queue.ts';
import { type CustomerIdentity, findOrCreateContact, recordContactActivity } from '#shared/contacts/repository.ts';
import { ContactGone, conversationTouch, findOrCreateConversation } from '#shared/conversations/repository.ts';
import { logger } from '#shared/log/logger.ts';
import { findByWamid, getMessage, messageOwnerPut, messagePut, wamidPut, type Message } from './repository.ts';
import { routePut } from './send-route.ts';
import { isCustomerTurn } from '#shared/ai/customer-turn.ts';

export interface InboundOutcome {
  stored: boolean;
  messageId?: string;
  conversationId?: string;
}

/** How far ahead of this service's clock a Meta timestamp may be and still be taken as given. */
const CLOCK_SKEW_MS = 5 * 60_000;

/** `timestamp` of a webhook object (unix seconds as a string) → ISO; now when absent or odd. */
export const webhookTime = (ts: unknown): string => {
  const ms = Number(ts) * 1000;
  const now = Date.now();
  // A time ahead of ours by more than clocks drift (a millisecond value, a forged year 2100) is taken as now: it
  // would hold the 24-hour window open for ever, and one past year 275760 is no date at all.
  return new Date(Number.isFinite(ms) && ms > 0 && ms <= now + CLOCK_SKEW_MS ? ms : now).toISOString();
};

/**
 * When an incoming message was written, to the millisecond where that can be told: Meta's timestamp has whole seconds,
 * so a message that comes in within the second it names is taken at the moment it came in (it was written no later),
 * and it lists after a reply sent earlier in that second, not before it.
 */
export const writtenAt = (ts: unknown, arrived = Date.now()): string => {
  const at = webhookTime(ts);
  return Math.floor(Date.parse(at) / 1000) === Math.floor(arrived / 1000) ? new Date(arrived).toISOString() : at;
};

/** Meta's wamids and user ids are well under this; a longer one is not Meta's (and would not fit a table key). */
const MAX_ID_LENGTH = 512;
/** A user id as Meta sends one: a non-empty string within MAX_ID_LENGTH. */
const idOf = (x: unknown): string | undefined => (typeof x === 'string' && x && x.length <= MAX_ID_LENGTH ? x : undefined);
/** Meta's messages are a few KB (a text is at most 4096 characters): one past this would not fit a table item. */
const MAX_MESSAGE_BYTES = 256 * 1024;

/**
 * Who sent an incoming message, as the Cloud API names them: `from` (their number, digits), and `from_user_id`
 * (their business-scoped user id), with their entry of `value.contacts` (`wa_id` / `user_id`, `profile.name`,
 * `profile.username`). A customer who writes by username may come with no number at all, and a message that names
 * no sender is the customer's of a change with a single contact entry (its `wa_id` or `user_id`). Where several
 * entries come, the sender's is the one with its number or user id; a single entry is the sender's.
 */
function senderOf(value: Record<string, any>, message: Record<string, any>) {
  const contacts = Array.isArray(value.contacts) ? (value.contacts as unknown[]).filter((c): c is Record<string, any> => typeof c === 'object' && c !== null) : [];
  const only = contacts.length === 1 && message.from === undefined && message.from_user_id === undefined ? contacts[0] : undefined;
  const digits = String(message.from ?? only?.wa_id ?? '').replace(/\D/g, '');
  // A longer sender than an E.164 number (or than Meta's user ids, below) names no one.
  const phone = digits.length <= MAX_E164_DIGITS ? digits : '';
  const fromUserId = idOf(message.from_user_id);
  // A change's lone entry is its sender's (pywa and netflie read contacts[0] so, whatever its wa_id says).
  const entry = only ?? contacts.find((c) => (phone && String(c.wa_id) === phone) || (fromUserId && c.user_id === fromUserId)) ?? (contacts.length === 1 ? contacts[0] : undefined);
  // The user id Meta sends beside a number (in the sender's contacts entry) names the same customer.
  const userId = fromUserId ?? idOf(entry?.user_id);
  const name = entry?.profile?.name ?? entry?.profile?.username;
  return { phone: phone || undefined, userId, name: typeof name === 'string' && name ? name : undefined, entry };
}

/**
 * The conversation touch's place in an inbound message's transaction. Its condition: the conversation is open, and no
 * later message of it was stored since it was read (shared/conversations/repository.ts conversationTouch).
 */
const CONVERSATION_TOUCH = 3;
/**
 * A conversation closed at the moment a message arrives is followed by a new one, and one a later message touched
 * meanwhile is read again: each lost try is another message stored, so more tries than a burst of one customer's
 * messages stored side by side are a fault.
 */
const MAX_CONVERSATION_TRIES = 10;

/** Best effort: a name not written (the contact changed or went meanwhile) is taken on the customer's next message. */
async function nameFromProfile(businessId: string, contactId: string, name: string): Promise<void> {
  const { updateContact } = await import('#shared/contacts/service.ts');
  await updateContact(businessId, contactId, { name }).catch((err: unknown) =>
    logger.warn('profile name not written to the contact', { businessId, contactId, error: err as Error }));
}

/** `arrived`: when the notification carrying the message came in (ms), one moment for all the messages it carries. */
export async function recordInbound(businessId: string, value: Record<string, any>, message: Record<string, any>, arrived = Date.now()): Promise<InboundOutcome> {
  const wamid = String(message.id ?? '');
  const sender = senderOf(value, message);
  if (!wamid || wamid.length > MAX_ID_LENGTH || (!sender.phone && !sender.userId)) {
    logger.warn('inbound message without id or sender ignored', { businessId });
    return { stored: false };
  }
  // Not Meta's shape, and never storable: dropped now rather than retried until the dead-letter queue.
  if (Buffer.byteLength(JSON.stringify(message)) > MAX_MESSAGE_BYTES) {
    logger.warn('inbound message over the size of any Cloud API message ignored', { businessId, wamid: wamid.slice(0, 100) });
    return { stored: false };
  }
  const known = await findByWamid(businessId, wamid);
  if (known) return askAiAgain(businessId, known.messageId);

  const who: CustomerIdentity = sender.phone ? { phone: `+${sender.phone}`, userId: sender.userId } : { userId: sender.userId! };
  const at = writtenAt(message.timestamp, arrived);
  // A contact this message creates was last in contact now (its contact.created says so, not null).
  const contactOf = () => findOrCreateContact(businessId, who, { origin: 'inbound', lastContactAt: at, ...(sender.name ? { name: sender.name } : {}) });
  let { contact } = await contactOf();
  // A contact the business made without a name takes the one the customer shows (never replacing the business's own).
  if (sender.name && !contact.name) await nameFromProfile(businessId, contact.id, sender.name);
  const type = String(message.type ?? 'unknown');
  const upstreamFormat = {
    messaging_product: value.messaging_product ?? 'whatsapp',
    metadata: value.metadata,
    // The sender's own entry of the change's contacts, as Meta sent it; none when Meta sent none (system messages).
    ...(sender.entry ? { contacts: [sender.entry] } : {}),
    messages: [message],
    // The change's own errors beside its messages (e.g. why an interactive message came without its body).
    ...(Array.isArray(value.errors) ? { errors: value.errors } : {}),
  };
  for (let attempt = 1; ; attempt++) {
    const opened = await findOrCreateConversation(businessId, contact).catch((err: unknown) => {
      if (err instanceof ContactGone && attempt < MAX_CONVERSATION_TRIES) return undefined;
      throw err;
    });
    // The contact was deleted meanwhile: the number's next contact takes the message (a new one, as after any delete).
    if (!opened) {
      ({ contact } = await contactOf());
      continue;
    }
    const { conversation } = opened;
    const stored: Message = {
      // A UUIDv7: Meta's timestamps are whole seconds, and a conversation's messages are ordered by time, then id, so
      // the messages of one second keep the order they were received in (the AI reads them in that order too).
      id: uuidv7(),
      businessId,
      conversationId: conversation.id,
      contactId: contact.id,
      direction: 'inbound',
      messageType: type,
      status: 'received',
      wamid,
      phoneNumber: contact.phone_number,
      waId: sender.phone ?? null,
      content: message[type] ?? null,
      payload: message,
      createdAt: at,
      updatedAt: new Date().toISOString(),
      receivedAt: at,
    };
    try {
      await commitWithRetry(
        [
          wamidPut(wamid, businessId, stored.id),
          messagePut(stored),
          messageOwnerPut(stored),
          conversationTouch(conversation, { at, direction: 'inbound' }),
          // The reply to this customer finds its contact and conversation in one read (a customer without a number
          // cannot be written to by number).
          ...(contact.phone_number ? [routePut(businessId, contact.phone_number, { contactId: contact.id, conversationId: conversation.id })] : []),
        ],
        [newEvent(businessId, 'message.received', { ...upstreamFormat, message_id: stored.id, conversation_id: conversation.id, contact_id: contact.id })],
      );
    } catch (err) {
      // The wamid pointer already exists: a concurrent or repeated delivery of the same message.
      if (isTransactionCancelled(err) && (await findByWamid(businessId, wamid))) return { stored: false };
      // The conversation was closed after it was read (the message opens the next one), or a later message touched it.
      if (attempt < MAX_CONVERSATION_TRIES && cancellationCodes(err)?.[CONVERSATION_TOUCH] === 'ConditionalCheckFailed') {
        await new Promise((r) => setTimeout(r, Math.random() * 10 * attempt));
        continue;
      }
      throw err;
    }
    await recordContactActivity(businessId, contact.id, at).catch((err) => logger.warn('contact activity not recorded', { error: err as Error }));
    if (isCustomerTurn(message, at)) await askAi(stored);
    return { stored: true, messageId: stored.id, conversationId: conversation.id };
  }
}

/** A failed send fails this upstream-events record, which the queue delivers again: see askAiAgain. */
/** The job names when the message came in (was stored): the AI's newest message is told by that, as its history is ordered. */
const askAi = (m: Pick<Message, 'businessId' | 'conversationId' | 'id' | 'updatedAt'>) =>
  enqueue('ai', { businessId: m.businessId, conversationId: m.conversationId, messageId: m.id, receivedAt: m.updatedAt });

/**
 * A message stored by an earlier delivery. That delivery may have failed between its commit and asking the AI (the
 * queue then delivers the record again, and this is the only chance left), so the AI is asked again; the agent
 * answers an inbound message once however many jobs name it (its reply claim), so a repeat costs a job, not a reply.
 */
async function askAiAgain(businessId: string, messageId: string): Promise<InboundOutcome> {
  const stored = await getMessage(businessId, messageId);
  if (stored && isCustomerTurn(stored.payload as Record<string, unknown>, stored.receivedAt ?? stored.createdAt)) await askAi(stored);
  return { stored: false };
}
