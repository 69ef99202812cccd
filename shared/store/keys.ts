/**
 * Every key shape of the single table, in one place, with the access pattern it serves.
 *
 * Tenancy first: every business item lives under a partition key that starts with `B#{businessId}`,
 * so a query built from an authenticated business id cannot reach another business's items.
 * Global look-ups (API key hash, upstream phone number id, wamid) are separate small items that
 * point back into a business.
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
 * | contact filter projection, sharded        | index shard: spk B#{bid}#S{n}  ssk {contactId}             |
 * | funnel stages of a business               | pk B#{bid}            sk begins STAGE#                     |
 * | conversation by id; list by recency       | pk B#{bid} sk CONV#{id}; gsi1 B#{bid}#CONVS / {lastAt}#{id}|
 * | open conversation of a contact            | pk B#{bid}            sk CCONV#{contactId}                 |
 * | message by id; messages of a conversation | pk B#{bid} sk MSG#{id}; gsi1 B#{bid}#CONV#{cid} / {at}#{id}|
 * | message by upstream wamid                 | pk WAMID#{wamid}      sk WAMID                             |
 * | segments; static members of a segment     | pk B#{bid} sk SEG#{id}; pk B#{bid}#SEG#{id} sk C#{contact} |
 * | webhook subscriptions; their deliveries   | pk B#{bid} sk WH#{id}; pk B#{bid}#WH#{id} sk D#{delivery}  |
 * | outbox (events not yet fanned out)        | pk B#{bid}#OUTBOX     sk {eventId}                         |
 * | AI settings (business-wide)               | pk B#{bid}            sk AI                                |
 * | idempotency records                       | pk B#{bid}#IDEM#{scope} sk {key} (ttl)                     |
 * | broadcasts; their recipients              | pk B#{bid} sk BCAST#{id}; pk B#{bid}#BCAST#{id} sk R#{cid} |
 * | media records                             | pk B#{bid}            sk MEDIA#{mediaId}                   |
 */
export type Key = { pk: string; sk: string };

const biz = (bid: string) => `B#${bid}`;

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
  /** Shard keys of the contact projection (index `shard`). */
  contactShard: (bid: string, shard: number, contactId: string) => ({ spk: `${biz(bid)}#S${shard}`, ssk: contactId }),
  contactShardPk: (bid: string, shard: number) => `${biz(bid)}#S${shard}`,

  stage: (bid: string, stageId: string): Key => ({ pk: biz(bid), sk: `STAGE#${stageId}` }),
  stagePrefix: (bid: string) => ({ pk: biz(bid), skPrefix: 'STAGE#' }),

  conversation: (bid: string, conversationId: string): Key => ({ pk: biz(bid), sk: `CONV#${conversationId}` }),
  conversationByRecency: (bid: string, lastAt: string, conversationId: string) => ({
    gsi1pk: `${biz(bid)}#CONVS`,
    gsi1sk: `${lastAt}#${conversationId}`,
  }),
  conversationsByRecencyPk: (bid: string) => `${biz(bid)}#CONVS`,
  openConversationOfContact: (bid: string, contactId: string): Key => ({ pk: biz(bid), sk: `CCONV#${contactId}` }),

  message: (bid: string, messageId: string): Key => ({ pk: biz(bid), sk: `MSG#${messageId}` }),
  messageInConversation: (bid: string, conversationId: string, createdAt: string, messageId: string) => ({
    gsi1pk: `${biz(bid)}#CONV#${conversationId}`,
    gsi1sk: `${createdAt}#${messageId}`,
  }),
  messagesOfConversationPk: (bid: string, conversationId: string) => `${biz(bid)}#CONV#${conversationId}`,
  wamid: (wamid: string): Key => ({ pk: `WAMID#${wamid}`, sk: 'WAMID' }),

  segment: (bid: string, segmentId: string): Key => ({ pk: biz(bid), sk: `SEG#${segmentId}` }),
  segmentPrefix: (bid: string) => ({ pk: biz(bid), skPrefix: 'SEG#' }),
  segmentMember: (bid: string, segmentId: string, contactId: string): Key => ({
    pk: `${biz(bid)}#SEG#${segmentId}`,
    sk: `C#${contactId}`,
  }),
  segmentMembersPk: (bid: string, segmentId: string) => `${biz(bid)}#SEG#${segmentId}`,

  webhook: (bid: string, webhookId: string): Key => ({ pk: biz(bid), sk: `WH#${webhookId}` }),
  webhookPrefix: (bid: string) => ({ pk: biz(bid), skPrefix: 'WH#' }),
  delivery: (bid: string, webhookId: string, deliveryId: string): Key => ({
    pk: `${biz(bid)}#WH#${webhookId}`,
    sk: `D#${deliveryId}`,
  }),
  deliveriesPk: (bid: string, webhookId: string) => `${biz(bid)}#WH#${webhookId}`,

  outbox: (bid: string, eventId: string): Key => ({ pk: `${biz(bid)}#OUTBOX`, sk: eventId }),
  outboxPk: (bid: string) => `${biz(bid)}#OUTBOX`,

  aiSettings: (bid: string): Key => ({ pk: biz(bid), sk: 'AI' }),

  idempotency: (bid: string, scope: string, key: string): Key => ({ pk: `${biz(bid)}#IDEM#${scope}`, sk: key }),

  broadcast: (bid: string, broadcastId: string): Key => ({ pk: biz(bid), sk: `BCAST#${broadcastId}` }),
  broadcastPrefix: (bid: string) => ({ pk: biz(bid), skPrefix: 'BCAST#' }),
  broadcastRecipient: (bid: string, broadcastId: string, contactId: string): Key => ({
    pk: `${biz(bid)}#BCAST#${broadcastId}`,
    sk: `R#${contactId}`,
  }),
  broadcastRecipientsPk: (bid: string, broadcastId: string) => `${biz(bid)}#BCAST#${broadcastId}`,

  media: (bid: string, mediaId: string): Key => ({ pk: biz(bid), sk: `MEDIA#${mediaId}` }),
} as const;
