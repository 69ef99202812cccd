/**
 * Every key shape of the single table, in one place, with the access pattern it serves.
 *
 * Tenancy first: every business item lives under a partition key that starts with `B#{businessId}`,
 * so a query built from an authenticated business id cannot reach another business's items.
 * Global look-ups (API key hash, upstream phone number id) are separate small items that point back
 * into a business.
 *
 * Access patterns
 * | pattern                                   | key                                                        |
 * |-------------------------------------------|------------------------------------------------------------|
 * | business by id                            | pk B#{bid}            sk BUSINESS                          |
 * | business by upstream phone number id      | pk PHONEID#{id}       sk PHONEID                           |
 * | API key by SHA-256 of the key (auth)      | pk APIKEY#{hash}      sk APIKEY                            |
 * | API key by key id (revoke)                | gsi1 KEYID#{keyId}                                         |
 * | rate-limit window per key and class       | pk RL#{keyId}#{class}#{windowStart} sk RL (ttl)            |
 * | team agents of a business                 | pk B#{bid}            sk begins AGENT#                     |
 * | contact by id; contacts of a business     | pk B#{bid}            sk CONTACT#{id} / begins CONTACT#     |
 * | contact by phone (unique per business)    | pk B#{bid}            sk CPHONE#{e164}                     |
 * | contact filter projection, sharded,       | index shard: spk B#{bid}#S{n}  ssk {newest-first           |
 * |   newest first in each shard              |   created_at}#{contactId}                                  |
 * | funnel stages of a business (own partition: | pk B#{bid}#FUNNEL     sk begins STAGE#                     |
 * |   listing them never wades through contacts)|                                                            |
 * | funnel stage slots (the 50-stage limit)    | pk B#{bid}#FUNNEL     sk FSLOT#{0..49}                     |
 * | conversation by id; list by recency       | pk B#{bid} sk CONV#{id}; gsi1 B#{bid}#CONVS / {lastAt}#{id}|
 * | open conversation of a contact            | pk B#{bid}            sk CCONV#{contactId}                 |
 * | window of a contact's last closed conv.   | pk B#{bid}            sk CCLOSED#{contactId}               |
 * | message by id; messages of a conversation | pk B#{bid} sk MSG#{id}; gsi1 B#{bid}#CONV#{cid} / {at}#{id}|
 * | message by upstream wamid, per business   | pk B#{bid}#WAMID#{wamid} sk WAMID (before 2026-11-27: the  |
 * |   (the same wamid may reach two numbers)  |   global pk WAMID#{wamid}, still read beside it)           |
 * | send in flight (recorded, upstream answer | pk B#{bid} sk PSEND#{messageId};                           |
 * |   not settled yet), swept when stale      |   gsi1 PSEND#{shard} / {createdAt}#{bid}#{messageId}       |
 * | where sends to a number go: its contact   | pk B#{bid}            sk SROUTE#{e164} (checked against    |
 * |   and open conversation (send fast path)  |   CPHONE and CCONV in the send's own transaction)          |
 * | segments; static members of a segment     | pk B#{bid} sk SEG#{id}; pk B#{bid}#SEG#{id} sk C#{contact} |
 * | dynamic segment counters per id range     | pk B#{bid}#SEGC#{range} sk K / T#{minute}[#B{token}] (dated deltas) |
 * | webhook subscriptions; their deliveries   | pk B#{bid}#WHS sk WH#{id}; pk B#{bid}#WH#{id} sk D#{delivery} |
 * | outbox (events not yet fanned out), one   | pk B#{bid}#EVK#{orderingKey} sk E#{createdAt}#{eventId}    |
 * |   partition per ordering key ('-': none)  |                                                            |
 * | outbox leftovers (the sweep reads shards) | gsi1 OUTBOX#{shard} / {bid}#{orderingKey}#{createdAt}#{id}  |
 * | owner of a webhook subscription id (403)  | pk WHID#{id}          sk WHID                              |
 * | webhook subscription count; one claim per | pk B#{bid}#WHT sk COUNT; pk B#{bid}#WHT sk T#{sha256 of    |
 * |   target (URL and events) of a business   |   URL and events}: the cap and no duplicates, under races  |
 * | owner of a contact, stage, conversation,  | pk OWNER#{kind}#{id} sk OWNER                              |
 * |   message or broadcast id (403)           |                                                            |
 * | deliveries of a webhook, newest first     | pk B#{bid}#WH#{id} sk D#{deliveryId} read backwards (the   |
 * |                                           |   ids are time-ordered UUIDv7s: no index to keep up)        |
 * | pending deliveries of one ordering lane,  | pk B#{bid}#EVK#{orderingKey} sk L#{webhookId}#{createdAt}#{eventId} |
 * |   beside the key's outbox items: the fan-out reads both in one consistent query |                  |
 * | AI settings (business-wide)               | pk B#{bid}            sk AI                                |
 * | AI latest inbound of a conversation       | pk B#{bid}            sk AICONV#{conversationId}           |
 * | AI reply marker per inbound message       | pk B#{bid}            sk AIREPLY#{messageId} (ttl)         |
 * | idempotency records                       | pk B#{bid}#IDEM#{scope} sk {key} (ttl)                     |
 * | broadcasts; their recipients              | pk B#{bid} sk BCAST#{id}; pk B#{bid}#BCAST#{id} sk R#{cid} |
 * | broadcasts by recency                     | gsi1 B#{bid}#BCASTS / {createdAt}#{id}                     |
 * | places of unfinished broadcasts (caps)    | pk B#{bid}#BSCHED (with a send_at) or B#{bid}#BRUN (started at once) sk SLOT#{n} |
 * | recipients still to send, in audience order | gsi1 B#{bid}#BCAST#{id}#Q / {seq} (sparse: removed once sent) |
 * | broadcast recipient by service message id | gsi1 B#{bid}#BMSG#{messageId} / R (set once sent)          |
 * | business message budget (minute, second)  | pk B#{bid}#MSGBUDGET#{M|S}{epoch} sk BUDGET (ttl)          |
 * | where a segment is used (broadcasts...)   | pk B#{bid}#SEGUSE#{segmentId} sk {kind}#{refId}            |
 * | media records                             | pk B#{bid}            sk MEDIA#{mediaId}                   |
 * | presigned media uploads                   | pk B#{bid}            sk MUPLOAD#{uploadId} (ttl)          |
 * | media jobs (proxy/convert before a send)  | pk B#{bid}            sk MJOB#{jobId} (ttl)                |
 */
export type Key = { pk: string; sk: string };

/** The records whose ids have a global owner item (shared/auth/ownership.ts): another account's id answers 403. */
export type OwnedKind = 'contact' | 'stage' | 'conversation' | 'message' | 'broadcast';

const biz = (bid: string) => `B#${bid}`;

// Partitions (and a sort-key prefix) that both an item key and a query name: each shape is written once.
const segmentMembersPk = (bid: string, segmentId: string) => `${biz(bid)}#SEG#${segmentId}`;
const webhooksPk = (bid: string) => `${biz(bid)}#WHS`;
const deliveriesPk = (bid: string, webhookId: string) => `${biz(bid)}#WH#${webhookId}`;
const eventKeyPk = (bid: string, orderingKey: string) => `${biz(bid)}#EVK#${orderingKey}`;
const outboxIndexPk = (shard: number) => `OUTBOX#${shard}`;
const outboxIndexBusinessPrefix = (bid: string) => `${biz(bid)}#`;
const broadcastRecipientsPk = (bid: string, broadcastId: string) => `${biz(bid)}#BCAST#${broadcastId}`;
const broadcastsByRecencyPk = (bid: string) => `${biz(bid)}#BCASTS`;
const scheduledBroadcastsPk = (bid: string) => `${biz(bid)}#BSCHED`;
const runningBroadcastsPk = (bid: string) => `${biz(bid)}#BRUN`;
const SCHEDULE_SLOT_PREFIX = 'SLOT#';
const broadcastQueuePk = (bid: string, broadcastId: string) => `${broadcastRecipientsPk(bid, broadcastId)}#Q`;
const segmentUsagePk = (bid: string, segmentId: string) => `${biz(bid)}#SEGUSE#${segmentId}`;
const segmentCounterPk = (bid: string, range: number) => `${biz(bid)}#SEGC#${range}`;

/** The largest creation instant the shard sort key orders (epoch seconds, 7 base-36 digits: year 4453). */
const NEWEST_FIRST = 36 ** 7 - 1;

/** FNV-1a: a stable, even spread of strings over index shards. */
const fnv1a = (text: string): number => {
  let h = 0x811c9dc5;
  for (const ch of text) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0;
  return h;
};

/** One lane always lands in the same outbox index shard. */
const outboxShard = (bid: string, orderingKey: string): number => fnv1a(`${bid}#${orderingKey}`) % 16;

export const keys = {
  business: (bid: string): Key => ({ pk: biz(bid), sk: 'BUSINESS' }),
  phoneNumber: (phoneNumberId: string): Key => ({ pk: `PHONEID#${phoneNumberId}`, sk: 'PHONEID' }),
  apiKey: (hash: string): Key => ({ pk: `APIKEY#${hash}`, sk: 'APIKEY' }),
  apiKeyIdIndex: (keyId: string) => ({ gsi1pk: `KEYID#${keyId}`, gsi1sk: 'APIKEY' }),
  rateWindow: (keyId: string, limitClass: string, windowStart: number): Key => ({
    pk: `RL#${keyId}#${limitClass}#${windowStart}`,
    sk: 'RL',
  }),

  agent: (bid: string, agentId: string): Key => ({ pk: biz(bid), sk: `AGENT#${agentId}` }),
  agentPrefix: (bid: string) => ({ pk: biz(bid), skPrefix: 'AGENT#' }),

  contact: (bid: string, contactId: string): Key => ({ pk: biz(bid), sk: `CONTACT#${contactId}` }),
  contactPrefix: (bid: string) => ({ pk: biz(bid), skPrefix: 'CONTACT#' }),
  contactPhone: (bid: string, e164: string): Key => ({ pk: biz(bid), sk: `CPHONE#${e164}` }),
  /** The claim of a WhatsApp business-scoped user id (a sender known by username, without a phone number). */
  contactUserId: (bid: string, userId: string): Key => ({ pk: biz(bid), sk: `CUSER#${userId}` }),
  /** Shard keys of the contact projection (index `shard`), each shard newest first: created_at (epoch seconds) inverted in 7 base-36 digits, then the id. */
  contactShard: (bid: string, shard: number, contactId: string, createdSec: number | null) => ({
    spk: `${biz(bid)}#S${shard}`,
    ssk: `${(NEWEST_FIRST - Math.min(NEWEST_FIRST, Math.max(0, createdSec ?? 0))).toString(36).padStart(7, '0')}#${contactId}`,
  }),
  /** The contact id in a shard sort key (a key written before the newest-first order is the id alone). */
  contactShardId: (ssk: string) => ssk.slice(ssk.indexOf('#') + 1),
  contactShardPk: (bid: string, shard: number) => `${biz(bid)}#S${shard}`,

  stage: (bid: string, stageId: string): Key => ({ pk: `${biz(bid)}#FUNNEL`, sk: `STAGE#${stageId}` }),
  stagePrefix: (bid: string) => ({ pk: `${biz(bid)}#FUNNEL`, skPrefix: 'STAGE#' }),
  /** One of the 50 slots a stage occupies: claiming a free slot is how a new stage respects the limit without a hot counter. */
  stageSlot: (bid: string, slot: number): Key => ({ pk: `${biz(bid)}#FUNNEL`, sk: `FSLOT#${slot}` }),
  /** One of the MAX_DYNAMIC_SEGMENTS slots a dynamic segment holds, as a stage holds a funnel slot. */
  segmentSlot: (bid: string, slot: number): Key => ({ pk: biz(bid), sk: `DSLOT#${slot}` }),
  /** One of the MAX_SEGMENTS places every segment, static or dynamic, holds. */
  segmentPlace: (bid: string, place: number): Key => ({ pk: biz(bid), sk: `SPLACE#${place}` }),

  conversation: (bid: string, conversationId: string): Key => ({ pk: biz(bid), sk: `CONV#${conversationId}` }),
  conversationPrefix: (bid: string) => ({ pk: biz(bid), skPrefix: 'CONV#' }),
  conversationByRecency: (bid: string, lastAt: string, conversationId: string) => ({
    gsi1pk: `${biz(bid)}#CONVS`,
    gsi1sk: `${lastAt}#${conversationId}`,
  }),
  conversationsByRecencyPk: (bid: string) => `${biz(bid)}#CONVS`,
  openConversationOfContact: (bid: string, contactId: string): Key => ({ pk: biz(bid), sk: `CCONV#${contactId}` }),
  /** The window of a contact's last closed conversation (its last inbound message), for the conversation that follows. */
  closedConversationOfContact: (bid: string, contactId: string): Key => ({ pk: biz(bid), sk: `CCLOSED#${contactId}` }),

  message: (bid: string, messageId: string): Key => ({ pk: biz(bid), sk: `MSG#${messageId}` }),
  messagePrefix: (bid: string) => ({ pk: biz(bid), skPrefix: 'MSG#' }),
  messageInConversation: (bid: string, conversationId: string, createdAt: string, messageId: string) => ({
    gsi1pk: `${biz(bid)}#CONV#${conversationId}`,
    gsi1sk: `${createdAt}#${messageId}`,
  }),
  messagesOfConversationPk: (bid: string, conversationId: string) => `${biz(bid)}#CONV#${conversationId}`,
  wamid: (bid: string, wamid: string): Key => ({ pk: `${biz(bid)}#WAMID#${wamid}`, sk: 'WAMID' }),
  /** The global wamid pointer tables written before 2026-11-27 hold (it names its business). */
  legacyWamid: (wamid: string): Key => ({ pk: `WAMID#${wamid}`, sk: 'WAMID' }),
  pendingSend: (bid: string, messageId: string): Key => ({ pk: biz(bid), sk: `PSEND#${messageId}` }),
  /** Index entry of a send in flight: sharded by message id so the sweep can find every business's stale ones. */
  pendingSendIndex: (bid: string, messageId: string, createdAt: string) => ({
    gsi1pk: `PSEND#${fnv1a(messageId) % 16}`,
    gsi1sk: `${createdAt}#${bid}#${messageId}`,
  }),
  pendingSendIndexPk: (shard: number) => `PSEND#${shard}`,
  pendingSendShards: 16,
  sendRoute: (bid: string, e164: string): Key => ({ pk: biz(bid), sk: `SROUTE#${e164}` }),

  segment: (bid: string, segmentId: string): Key => ({ pk: biz(bid), sk: `SEG#${segmentId}` }),
  segmentPrefix: (bid: string) => ({ pk: biz(bid), skPrefix: 'SEG#' }),
  segmentMember: (bid: string, segmentId: string, contactId: string): Key => ({
    pk: segmentMembersPk(bid, segmentId),
    sk: `C#${contactId}`,
  }),
  segmentMembersPk,
  segmentMemberSkPrefix: 'C#',
  /**
   * Dynamic segment counters, one partition per contact-id range (segments/counters): the range's counter item
   * (`K`: base counts, backfill cursors, versions) and its dated deltas of time-relative rules: minute items
   * (`T#{minute}`, the steps contact writes add) and a backfill step's own items (`T#{minute}#B{token}`, keyed by
   * their earliest step's minute). Both sort by minute, so one query reads every delta up to now.
   */
  segmentCounter: (bid: string, range: number): Key => ({ pk: segmentCounterPk(bid, range), sk: 'K' }),
  segmentCounterPk,
  segmentCounterDated: (bid: string, range: number, minute: number): Key => ({ pk: segmentCounterPk(bid, range), sk: `T#${String(minute).padStart(10, '0')}` }),
  segmentCounterBackfill: (bid: string, range: number, minute: number, token: string): Key => ({ pk: segmentCounterPk(bid, range), sk: `T#${String(minute).padStart(10, '0')}#B${token}` }),
  /** The minute a dated item's key names (either kind). */
  segmentCounterMinute: (sk: string): number => Number(sk.slice(2, 12)),

  /**
   * A business's webhook subscriptions, in a partition of their own: the fan-out reads it in the same
   * statement as the partitions of its events' ordering keys.
   */
  webhook: (bid: string, webhookId: string): Key => ({ pk: webhooksPk(bid), sk: `WH#${webhookId}` }),
  webhooksPk,
  /** How many subscriptions a business has (conditional counter: the cap holds under concurrent creates). */
  webhookCount: (bid: string): Key => ({ pk: `${biz(bid)}#WHT`, sk: 'COUNT' }),
  /** One subscription per target (URL and events) of a business: a claim written with the subscription, conditionally. */
  webhookTarget: (bid: string, target: string): Key => ({ pk: `${biz(bid)}#WHT`, sk: `T#${target}` }),
  /** Global pointer id → business, so that another account's subscription answers 403, not 404. */
  webhookOwner: (webhookId: string): Key => ({ pk: `WHID#${webhookId}`, sk: 'WHID' }),
  /** Global pointer record id → business (contacts, funnel stages), so that another account's id answers 403, not 404. */
  recordOwner: (kind: OwnedKind, id: string): Key => ({ pk: `OWNER#${kind}#${id.toLowerCase()}`, sk: 'OWNER' }),
  delivery: (bid: string, webhookId: string, deliveryId: string): Key => ({
    pk: deliveriesPk(bid, webhookId),
    sk: `D#${deliveryId}`,
  }),
  deliveriesPk,
  deliverySkPrefix: 'D#',
  /**
   * The partition of one ordering key of a business: its outbox items (`E#`) and the lanes of every
   * subscription (`L#{webhookId}#`), so that the fan-out sees both in one consistent query.
   */
  eventKeyPk,
  /** One lane per (subscription, ordering key): its first item is the only delivery that may be sent. */
  deliveryLane: (bid: string, webhookId: string, orderingKey: string, eventSk: string): Key => ({
    pk: eventKeyPk(bid, orderingKey),
    sk: `L#${webhookId}#${eventSk}`,
  }),
  deliveryLanePrefix: (webhookId: string) => `L#${webhookId}#`,

  outbox: (bid: string, orderingKey: string, eventSk: string): Key => ({ pk: eventKeyPk(bid, orderingKey), sk: `E#${eventSk}` }),
  outboxSkPrefix: 'E#',
  /** Index entry of an outbox item: sharded so the sweep can find every business's leftovers. */
  outboxIndex: (bid: string, orderingKey: string, eventSk: string) => ({
    gsi1pk: outboxIndexPk(outboxShard(bid, orderingKey)),
    gsi1sk: `${outboxIndexBusinessPrefix(bid)}${orderingKey}#${eventSk}`,
  }),
  outboxIndexPk,
  /** The start of every index sort key of a business's outbox items, in any shard. */
  outboxIndexBusinessPrefix,
  outboxShards: 16,

  aiSettings: (bid: string): Key => ({ pk: biz(bid), sk: 'AI' }),
  /** Debounce: the newest inbound message of a conversation the AI worker has seen. */
  aiConversation: (bid: string, conversationId: string): Key => ({ pk: biz(bid), sk: `AICONV#${conversationId}` }),
  /** At most one AI reply per inbound message (a conditional claim). */
  aiReply: (bid: string, messageId: string): Key => ({ pk: biz(bid), sk: `AIREPLY#${messageId}` }),

  idempotency: (bid: string, scope: string, key: string): Key => ({ pk: `${biz(bid)}#IDEM#${scope}`, sk: key }),

  broadcast: (bid: string, broadcastId: string): Key => ({ pk: biz(bid), sk: `BCAST#${broadcastId}` }),
  broadcastPrefix: (bid: string) => ({ pk: biz(bid), skPrefix: 'BCAST#' }),
  /** A scheduled broadcast's place under the business's cap (before 2026-11-28): counted while its send_at is ahead. */
  scheduledBroadcast: (bid: string, broadcastId: string): Key => ({ pk: scheduledBroadcastsPk(bid), sk: broadcastId }),
  /** One of the business's places for broadcasts created with a send_at: held until its broadcast ends. */
  scheduledBroadcastSlot: (bid: string, slot: number): Key => ({ pk: scheduledBroadcastsPk(bid), sk: `${SCHEDULE_SLOT_PREFIX}${slot}` }),
  scheduleSlotPrefix: SCHEDULE_SLOT_PREFIX,
  scheduledBroadcastsPk,
  /** One of the business's places for broadcasts started at their create: held until its broadcast ends. */
  runningBroadcastSlot: (bid: string, slot: number): Key => ({ pk: runningBroadcastsPk(bid), sk: `${SCHEDULE_SLOT_PREFIX}${slot}` }),
  runningBroadcastsPk,
  broadcastRecipient: (bid: string, broadcastId: string, contactId: string): Key => ({
    pk: broadcastRecipientsPk(bid, broadcastId),
    sk: `R#${contactId}`,
  }),
  broadcastRecipientsPk,
  broadcastRecipientSkPrefix: 'R#',
  /** Written once by a cancel: a broadcast's send records only while it does not exist (never updated: no conflicts). */
  broadcastStop: (bid: string, broadcastId: string): Key => ({ pk: broadcastRecipientsPk(bid, broadcastId), sk: 'STOP' }),
  /** An explicit audience, in numbered chunks of contact ids beside the recipients. */
  broadcastAudienceChunk: (bid: string, broadcastId: string, chunk: number): Key => ({
    pk: broadcastRecipientsPk(bid, broadcastId),
    sk: `A#${String(chunk).padStart(4, '0')}`,
  }),
  broadcastAudienceSkPrefix: 'A#',
  broadcastByRecency: (bid: string, createdAt: string, broadcastId: string) => ({ gsi1pk: broadcastsByRecencyPk(bid), gsi1sk: `${createdAt}#${broadcastId}` }),
  broadcastsByRecencyPk,
  /** Sparse queue of recipients not yet sent (gsi1), in audience order. */
  broadcastQueue: (bid: string, broadcastId: string, seq: number) => ({ gsi1pk: broadcastQueuePk(bid, broadcastId), gsi1sk: String(seq).padStart(8, '0') }),
  broadcastQueuePk,
  /** A sent recipient, found by the service message id when its status webhooks arrive (gsi1). */
  broadcastMessage: (bid: string, messageId: string) => ({ gsi1pk: `${biz(bid)}#BMSG#${messageId}`, gsi1sk: 'R' }),
  messageBudget: (bid: string, window: string): Key => ({ pk: `${biz(bid)}#MSGBUDGET#${window}`, sk: 'BUDGET' }),
  segmentUsage: (bid: string, segmentId: string, kind: string, refId: string): Key => ({ pk: segmentUsagePk(bid, segmentId), sk: `${kind}#${refId}` }),
  segmentUsagePk,

  media: (bid: string, mediaId: string): Key => ({ pk: biz(bid), sk: `MEDIA#${mediaId}` }),
  mediaUpload: (bid: string, uploadId: string): Key => ({ pk: biz(bid), sk: `MUPLOAD#${uploadId}` }),
  mediaJob: (bid: string, jobId: string): Key => ({ pk: biz(bid), sk: `MJOB#${jobId}` }),
} as const;
