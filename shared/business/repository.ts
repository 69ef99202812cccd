/**
 * Businesses and their messaging account (the upstream phone number id and WABA id they send from).
 * Locally every business gets its own sandbox phone number id, so that an inbound message reaches exactly one business.
 */
import { randomUUID } from 'node:crypto';
import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { db, table } from '#shared/store/client.ts';
import { keys } from '#shared/store/keys.ts';

export interface Business {
  businessId: string;
  name: string;
  phoneNumberId?: string;
  wabaId?: string;
  createdAt: string;
}

export async function createBusiness(name: string, phoneNumberId?: string, wabaId?: string): Promise<Business> {
  const business: Business = {
    businessId: randomUUID(),
    name,
    phoneNumberId: phoneNumberId ?? sandboxPhoneNumberId(),
    wabaId: wabaId ?? `waba_${randomUUID().slice(0, 8)}`,
    createdAt: new Date().toISOString(),
  };
  await db.send(new TransactWriteCommand({
    TransactItems: [
      { Put: { TableName: table(), Item: { ...keys.business(business.businessId), type: 'business', ...business }, ConditionExpression: 'attribute_not_exists(pk)' } },
      { Put: { TableName: table(), Item: { ...keys.phoneNumber(business.phoneNumberId!), type: 'phoneNumber', businessId: business.businessId } } },
    ],
  }));
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

/** Points a business at a real upstream account; the previous phone number id stops routing to it. */
export async function setMessagingAccount(businessId: string, phoneNumberId: string, wabaId: string): Promise<void> {
  const current = await getBusiness(businessId);
  if (!current) throw new Error(`business ${businessId} not found`);
  const items: any[] = [
    { Update: { TableName: table(), Key: keys.business(businessId), UpdateExpression: 'SET phoneNumberId = :p, wabaId = :w', ExpressionAttributeValues: { ':p': phoneNumberId, ':w': wabaId } } },
    { Put: { TableName: table(), Item: { ...keys.phoneNumber(phoneNumberId), type: 'phoneNumber', businessId } } },
  ];
  if (current.phoneNumberId && current.phoneNumberId !== phoneNumberId) {
    items.push({ Delete: { TableName: table(), Key: keys.phoneNumber(current.phoneNumberId) } });
  }
  await db.send(new TransactWriteCommand({ TransactItems: items }));
}
