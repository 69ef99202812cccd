/**
 * What a send needs to know before it can record its message, read in one request: the business (its number),
 * its AI settings (the handoff pause) and the send route of the recipient's number — the contact and its open
 * conversation, kept in one item (`SROUTE#{e164}`) so that a send to a known number finds both without following
 * the phone claim and then the conversation pointer.
 *
 * The route is a hint, never trusted alone: the send's recording transaction checks it against the phone claim
 * (`CPHONE`, released when the contact is deleted or renumbered) and the open-conversation pointer (`CCONV`,
 * removed when the conversation closes). A stale route fails those checks and the send takes the full look-up,
 * which writes a fresh route in the same recording transaction.
 */
import { table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';
import { batchGetAll } from '#shared/store/batch.ts';
import type { TransactItem } from '#shared/events/outbox.ts';
import { ApiError } from '#shared/http/errors.ts';
import { getBusiness, type Business } from '#shared/business/repository.ts';
import { aiSettingsFromItem, type AiSettings } from '#shared/ai/settings.ts';

export interface SendRoute {
  contactId: string;
  conversationId: string;
}

export interface SendContext {
  phoneNumberId: string;
  wabaId?: string;
  aiSettings: AiSettings;
  route?: SendRoute;
}

/** The business's upstream number, or the contract's 400 when it has none. */
export function messagingAccount(business: Business | undefined): { phoneNumberId: string; wabaId?: string } {
  if (!business?.phoneNumberId) {
    throw new ApiError(400, { error: 'messaging_not_configured', message: 'This business has no messaging account (phone number id) configured' });
  }
  return { phoneNumberId: business.phoneNumberId, wabaId: business.wabaId };
}

/** The business's messaging account, read on its own (read receipts, the Cloud-API-compatible routes). */
export async function requirePhoneNumber(businessId: string): Promise<{ businessId: string; phoneNumberId: string; wabaId?: string }> {
  return { businessId, ...messagingAccount(await getBusiness(businessId)) };
}

/** One consistent BatchGetItem: the business, its AI settings and the route of `phone` (E.164). */
export async function loadSendContext(businessId: string, phone: string): Promise<SendContext> {
  const wanted = [keys.business(businessId), keys.aiSettings(businessId), keys.sendRoute(businessId, phone)];
  const items = await batchGetAll(wanted);
  const bySk = new Map(items.map((it) => [it.sk as string, it]));
  const route = bySk.get(wanted[2].sk);
  return {
    ...messagingAccount(bySk.get(wanted[0].sk) as Business | undefined),
    aiSettings: aiSettingsFromItem(bySk.get(wanted[1].sk)),
    ...(route ? { route: { contactId: route.contactId as string, conversationId: route.conversationId as string } } : {}),
  };
}

/** The checks that make a route read without its sources safe to record a message with. */
export const routeChecks = (businessId: string, phone: string, route: SendRoute): TransactItem[] => [
  {
    ConditionCheck: {
      TableName: table(),
      Key: keys.contactPhone(businessId, phone),
      ConditionExpression: 'contactId = :contact',
      ExpressionAttributeValues: { ':contact': route.contactId },
    },
  },
  {
    ConditionCheck: {
      TableName: table(),
      Key: keys.openConversationOfContact(businessId, route.contactId),
      ConditionExpression: 'conversationId = :conversation',
      ExpressionAttributeValues: { ':conversation': route.conversationId },
    },
  },
];

/** The route of a number, written beside a message whose contact and conversation were just looked up in full. */
export const routePut = (businessId: string, phone: string, route: SendRoute): TransactItem => ({
  Put: { TableName: table(), Item: { ...keys.sendRoute(businessId, phone), type: 'sendRoute', ...route } },
});
