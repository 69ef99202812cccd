/**
 * Businesses and their messaging account (the upstream phone number id and WABA id they send from).
 * Locally every business gets its own sandbox phone number id, so that an inbound message reaches exactly one business.
 * A phone number id belongs to one business: its routing pointer is only written where no other business holds it,
 * and only `moveNumber` hands it over (issue 23 item 7: a silent re-point sent one business's customers to another).
 */
import { randomUUID } from 'node:crypto';
import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';
import { cancellationCodes } from '#shared/store/transact.ts';
import { logger } from '#shared/log/logger.ts';

export interface Business {
  businessId: string;
  name: string;
  phoneNumberId?: string;
  wabaId?: string;
  createdAt: string;
}

/** The phone number id already routes to another business: moving it is an explicit `moveNumber`. */
export class PhoneNumberTakenError extends Error {
  override readonly name = 'PhoneNumberTakenError';
  readonly phoneNumberId: string;
  readonly owner: string | undefined;
  constructor(phoneNumberId: string, owner: string | undefined) {
    super(`Phone number id ${phoneNumberId} belongs to business ${owner ?? '(another business)'}; move it explicitly with move-number`);
    this.phoneNumberId = phoneNumberId;
    this.owner = owner;
  }
}

/** The routing pointer of a phone number, written only where no other business holds it. */
const claimNumber = (phoneNumberId: string, businessId: string) => ({
  Put: {
    TableName: table(),
    Item: { ...keys.phoneNumber(phoneNumberId), type: 'phoneNumber', businessId },
    ConditionExpression: 'attribute_not_exists(pk) OR businessId = :me',
    ExpressionAttributeValues: { ':me': businessId },
  },
});

/** Which item of a cancelled transaction failed its condition (-1: none, or not a cancelled transaction). */
const failedConditionAt = (err: unknown): number => (cancellationCodes(err) ?? []).indexOf('ConditionalCheckFailed');

/** Runs a transaction whose item `claimAt` claims `phoneNumberId`; a number held by another business is a PhoneNumberTakenError. */
async function writeClaiming(items: any[], claimAt: number, phoneNumberId: string): Promise<void> {
  try {
    await db.send(new TransactWriteCommand({ TransactItems: items }));
  } catch (err) {
    if (failedConditionAt(err) !== claimAt) throw err;
    throw new PhoneNumberTakenError(phoneNumberId, await findBusinessByPhoneNumberId(phoneNumberId));
  }
}

export async function createBusiness(name: string, phoneNumberId?: string, wabaId?: string): Promise<Business> {
  const business: Business = {
    businessId: randomUUID(),
    name,
    phoneNumberId: phoneNumberId ?? sandboxPhoneNumberId(),
    wabaId: wabaId ?? `waba_${randomUUID().slice(0, 8)}`,
    createdAt: new Date().toISOString(),
  };
  await writeClaiming([
    { Put: { TableName: table(), Item: { ...keys.business(business.businessId), type: 'business', ...business }, ConditionExpression: 'attribute_not_exists(pk)' } },
    claimNumber(business.phoneNumberId!, business.businessId),
  ], 1, business.phoneNumberId!);
  return business;
}

/** A 15-digit id shaped like the upstream's phone number ids. */
const sandboxPhoneNumberId = (): string => {
  let id = '1';
  while (id.length < 15) id += Math.floor(Math.random() * 10);
  return id;
};

export async function getBusiness(businessId: string): Promise<Business | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: table(), Key: keys.business(businessId) }));
  return Item as Business | undefined;
}

export async function findBusinessByPhoneNumberId(phoneNumberId: string): Promise<string | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: table(), Key: keys.phoneNumber(phoneNumberId) }));
  return Item?.businessId as string | undefined;
}

/**
 * Points a business at a real upstream account; its previous phone number id stops routing to it. A number that
 * routes to another business is refused (PhoneNumberTakenError): see moveNumber.
 */
export async function setMessagingAccount(businessId: string, phoneNumberId: string, wabaId: string): Promise<void> {
  const current = await getBusiness(businessId);
  if (!current) throw new Error(`business ${businessId} not found`);
  const items: any[] = [
    claimNumber(phoneNumberId, businessId),
    { Update: { TableName: table(), Key: keys.business(businessId), UpdateExpression: 'SET phoneNumberId = :p, wabaId = :w', ExpressionAttributeValues: { ':p': phoneNumberId, ':w': wabaId } } },
  ];
  if (current.phoneNumberId && current.phoneNumberId !== phoneNumberId) items.push(releaseNumber(current.phoneNumberId, businessId));
  await writeClaiming(items, 0, phoneNumberId);
}

/** Deletes a routing pointer only while it still points at `businessId` (never another business's routing). */
const releaseNumber = (phoneNumberId: string, businessId: string) => ({
  Delete: { TableName: table(), Key: keys.phoneNumber(phoneNumberId), ConditionExpression: 'businessId = :me', ExpressionAttributeValues: { ':me': businessId } },
});

/**
 * Moves a phone number id to business `to` (with its WABA id): the only way a number changes hands. The business
 * that held it loses its messaging account in the same transaction (it no longer sends from, or receives for, the
 * number), and `to`'s previous number stops routing to it. Logged, as the operation that reroutes a customer's
 * inbound messages. Answers the business it was taken from (undefined when the number was free).
 */
export async function moveNumber(phoneNumberId: string, to: string, wabaId: string): Promise<{ from: string | undefined }> {
  const [from, target] = await Promise.all([findBusinessByPhoneNumberId(phoneNumberId), getBusiness(to)]);
  if (!target) throw new Error(`business ${to} not found`);
  if (from === undefined || from === to) {
    await setMessagingAccount(to, phoneNumberId, wabaId);
    return { from: undefined };
  }
  const items: any[] = [
    {
      Update: {
        TableName: table(), Key: keys.phoneNumber(phoneNumberId),
        UpdateExpression: 'SET businessId = :to', ConditionExpression: 'businessId = :from', ExpressionAttributeValues: { ':to': to, ':from': from },
      },
    },
    {
      Update: {
        TableName: table(), Key: keys.business(from),
        UpdateExpression: 'REMOVE phoneNumberId, wabaId', ConditionExpression: 'phoneNumberId = :p', ExpressionAttributeValues: { ':p': phoneNumberId },
      },
    },
    { Update: { TableName: table(), Key: keys.business(to), UpdateExpression: 'SET phoneNumberId = :p, wabaId = :w', ExpressionAttributeValues: { ':p': phoneNumberId, ':w': wabaId } } },
  ];
  if (target.phoneNumberId && target.phoneNumberId !== phoneNumberId) items.push(releaseNumber(target.phoneNumberId, to));
  await db.send(new TransactWriteCommand({ TransactItems: items }));
  logger.warn('phone number moved to another business', { phoneNumberId, from, to });
  return { from };
}
